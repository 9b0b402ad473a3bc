/**
 * `Altcha`: the proof-of-work widget of sign-in (spec §4.11, C2). It fetches a challenge from
 * `GET /altcha/challenge` as soon as it mounts, solves it in Web Workers (one per core, at most
 * 8, running altcha-lib's own solver; the page stays responsive), and puts the token into a
 * hidden input named by `name` (default `altcha`). A form holding it waits for the token: a submit before then is held and
 * goes through, with its submitter, once the token is there. A token counts once on the server,
 * so after each submit, and shortly before the challenge expires, it solves a fresh one.
 *
 * Props: `name`; `db` (sent as `X-DB-NAME`, for a page whose database the host does not name);
 * `challengeUrl` (default `/altcha/challenge`); `onToken(token)`, called with each solved token.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';

/**
 * The solver worker, told where the library's worker modules are: a worker has no import map, so
 * the page's map resolves them here and the worker imports them by URL.
 */
const WORKER_URL = new URL('../workers/altcha-solver.js', import.meta.url);
WORKER_URL.searchParams.set('pbkdf2', import.meta.resolve('altcha-lib/algorithms/web/pbkdf2'));
WORKER_URL.searchParams.set('shared', import.meta.resolve('altcha-lib/workers/shared'));
/** Solve again this long before the challenge expires. */
const RENEW_BEFORE_MS = 30_000;

/** @param {{name?: string, db?: string, challengeUrl?: string, onToken?: (token: string) => void}} props */
export function Altcha(props) {
  const name = typeof props.name === 'string' && props.name ? props.name : 'altcha';
  const challengeUrl = props.challengeUrl || '/altcha/challenge';
  const [round, setRound] = useState(0);
  const [status, setStatus] = useState(/** @type {'solving' | 'verified' | 'failed'} */ ('solving'));
  const root = useRef(/** @type {HTMLDivElement | null} */ (null));
  const input = useRef(/** @type {HTMLInputElement | null} */ (null));
  const token = useRef('');
  /** The submit held until the token is there: `undefined` when none, else its submitter (or null). */
  const held = useRef(/** @type {HTMLElement | null | undefined} */ (undefined));
  const onToken = useRef(props.onToken);
  onToken.current = props.onToken;

  useEffect(() => {
    const form = root.current?.closest('form');
    if (!form) return;
    const onSubmit = (/** @type {SubmitEvent} */ event) => {
      if (token.current) {
        // This submit spends the token: the next one needs a fresh solution (after the handlers have read this one).
        setTimeout(() => setRound((r) => r + 1), 0);
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
      held.current = event.submitter ?? null;
      form.setAttribute('aria-busy', 'true');
    };
    form.addEventListener('submit', onSubmit, { capture: true });
    return () => form.removeEventListener('submit', onSubmit, { capture: true });
  }, []);

  useEffect(() => {
    const controller = new AbortController();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let renew;
    token.current = '';
    if (input.current) input.current.value = '';
    setStatus('solving');
    (async () => {
      const res = await fetch(challengeUrl, { headers: props.db ? { 'X-DB-NAME': props.db } : {}, cache: 'no-store', signal: controller.signal });
      if (!res.ok) throw new Error(`${challengeUrl} answered ${res.status}: ${await res.text()}`);
      const challenge = /** @type {import('altcha-lib').Challenge} */ (await res.json());
      const solution = await solve(challenge, controller.signal);
      if (!solution) return;
      // The payload the server's verifyAltcha reads (src/auth/altcha.ts): base64 of the signed challenge and the solution.
      const solved = btoa(JSON.stringify({
        challenge: { parameters: challenge.parameters, signature: challenge.signature },
        solution: { counter: solution.counter, derivedKey: solution.derivedKey, time: solution.time },
      }));
      token.current = solved;
      if (input.current) input.current.value = solved;
      setStatus('verified');
      onToken.current?.(solved);
      if (challenge.parameters.expiresAt) {
        renew = setTimeout(() => setRound((r) => r + 1), Math.max(60_000, challenge.parameters.expiresAt * 1000 - Date.now() - RENEW_BEFORE_MS));
      }
      const form = root.current?.closest('form');
      if (form && held.current !== undefined) {
        const submitter = held.current;
        held.current = undefined;
        form.removeAttribute('aria-busy');
        form.requestSubmit(submitter && submitter.isConnected && /** @type {any} */ (submitter).form === form ? submitter : undefined);
      }
    })().catch((err) => {
      if (controller.signal.aborted) return;
      console.error('FieldForge: the human verification could not be completed', err);
      setStatus('failed');
    });
    return () => {
      controller.abort();
      clearTimeout(renew);
    };
  }, [round, props.db, challengeUrl]);

  const text = status === 'solving' ? 'Verifying you are human…' : status === 'verified' ? 'Verified' : 'Human verification failed.';
  return html`
    <div class="ff-altcha" ref=${root} data-state=${status}>
      <span class="ff-altcha__status" aria-live="polite">${text}</span>
      ${status === 'failed' ? html`<button type="button" class="ff-button" onClick=${() => setRound((r) => r + 1)}>Try again</button>` : null}
      <input type="hidden" name=${name} ref=${input} />
    </div>`;
}

/**
 * Solves `challenge` with altcha-lib's worker pool (loaded when the first widget mounts, so pages
 * without one never fetch it): counters interleaved over one worker per core, at most 8, the first
 * solution wins and every worker ends. Null once `signal` aborts.
 * @param {import('altcha-lib').Challenge} challenge @param {AbortSignal} signal
 * @returns {Promise<import('altcha-lib').Solution | null>}
 */
async function solve(challenge, signal) {
  const { solveChallengeWorkers } = await import('altcha-lib');
  if (signal.aborted) return null;
  const controller = new AbortController();
  signal.addEventListener('abort', () => controller.abort(), { once: true });
  const solution = await solveChallengeWorkers({
    challenge,
    controller,
    concurrency: Math.max(1, Math.min(8, navigator.hardwareConcurrency || 2)),
    createWorker: () => new Worker(WORKER_URL, { type: 'module', name: 'altcha-solver' }),
  });
  if (!solution && !signal.aborted) throw new Error('the challenge was not solved in time');
  return solution;
}
