/**
 * How far a running import is. The socket's `import_progress` frames for the import's
 * `progress_id` (CONTRACTS C4: at least every 1,000 records and at the end) are the source while
 * the socket is up; `GET /api/import-progress/{progress_id}` → `{done, total}` (issue 13 item 3)
 * is polled every few hundred milliseconds only while it is down. Unknown yet (404) is not an
 * error: the import has not started counting. The bar never moves backwards.
 */
import { api } from '../api.js';
import { isRealtimeConnected, onRealtime } from '../realtime/socket.js';

const POLL_MS = 300;

/**
 * Follows an import until `stop()` is called: socket frames, else polling; `onProgress` gets each
 * step forward.
 * @param {string} progressId
 * @param {(progress: {done: number, total: number}) => void} onProgress
 * @returns {() => void} stop
 */
export function followImportProgress(progressId, onProgress) {
  let best = -1;
  /** @param {{done: number, total: number}} progress */
  const report = (progress) => {
    if (progress.done < best) return;
    best = progress.done;
    onProgress({ done: progress.done, total: progress.total });
  };
  const off = onRealtime('import_progress', (data) => {
    if (data.progress_id === progressId && typeof data.done === 'number' && typeof data.total === 'number') report({ done: data.done, total: data.total });
  });
  const stopPolling = pollImportProgress(progressId, report, { skip: isRealtimeConnected });
  return () => {
    off();
    stopPolling();
  };
}

/**
 * Polls until `stop()` is called; `onProgress` gets each answer. While `skip()` holds (the socket
 * brings the progress), a tick sends nothing.
 * @param {string} progressId
 * @param {(progress: {done: number, total: number}) => void} onProgress
 * @param {{skip?: () => boolean}} [options]
 * @returns {() => void} stop
 */
export function pollImportProgress(progressId, onProgress, options = {}) {
  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const tick = async () => {
    if (options.skip?.()) {
      if (!stopped) timer = setTimeout(tick, POLL_MS);
      return;
    }
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
