/**
 * How far a running import is: `GET /api/import-progress/{progress_id}` → `{done, total}`
 * (issue 13 item 3; the socket's `import_progress` frames say the same, C4), read every few
 * hundred milliseconds while the import request is under way. Unknown yet (404) is not an error:
 * the import has not started counting.
 */
import { api } from '../api.js';

const POLL_MS = 300;

/**
 * Polls until `stop()` is called; `onProgress` gets each answer.
 * @param {string} progressId
 * @param {(progress: {done: number, total: number}) => void} onProgress
 * @returns {() => void} stop
 */
export function pollImportProgress(progressId, onProgress) {
  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const tick = async () => {
    try {
      const answer = /** @type {{done: number, total: number}} */ (await api.get(`/api/import-progress/${encodeURIComponent(progressId)}`, { quiet401: true }));
      if (!stopped && answer && typeof answer.done === 'number') onProgress(answer);
    } catch {
      // not counting yet, or briefly unreachable: the import's own answer is what counts
    }
    if (!stopped) timer = setTimeout(tick, POLL_MS);
  };
  timer = setTimeout(tick, POLL_MS / 2);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** A fresh progress id. */
export function newProgressId() {
  return globalThis.crypto?.randomUUID?.() ?? `import-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}
