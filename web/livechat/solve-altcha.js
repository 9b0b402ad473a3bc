/**
 * The live-chat widget's proof of work (spec §4.11): the challenge of `GET /livechat/altcha`,
 * solved with altcha-lib's own solver and its WebCrypto PBKDF2 (`/livechat/altcha-lib.js`, loaded
 * only when a visitor starts a chat). A worker must come from the page's own origin, which ours is
 * not, so the solver runs on the page: several interleaved counters at once, each attempt an
 * asynchronous WebCrypto call the browser runs off the page's thread, so the page stays
 * responsive. The answer is the payload the server's `verifyAltcha` reads.
 */

import { chatUrl } from './visitor-requests.js';

/**
 * @typedef {{
 *   solveChallenge: typeof import('altcha-lib').solveChallenge,
 *   deriveKey: typeof import('altcha-lib/algorithms/web/pbkdf2').deriveKey,
 * }} Solver
 */

/** Attempts in flight at once (one interleaved counter each). */
const LANES = Math.max(2, Math.min(8, navigator.hardwareConcurrency || 2));

/**
 * A solved challenge of `server` for database `db`, ready for `POST /livechat/session`.
 * @param {string} server the widget's origin @param {string} db @param {AbortSignal} signal
 * @returns {Promise<string>}
 */
export async function solveAltcha(server, db, signal) {
  const [solver, res] = await Promise.all([
    /** @type {Promise<Solver>} */ (import(`${server}/livechat/altcha-lib.js`)),
    fetch(chatUrl(server, '/livechat/altcha', db), { cache: 'no-store', credentials: 'omit', signal }),
  ]);
  if (!res.ok) throw new Error(`The chat is unavailable (${res.status})`);
  const challenge = /** @type {import('altcha-lib').Challenge} */ (await res.json());
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    const lanes = Array.from({ length: LANES }, (_, i) => solver.solveChallenge({
      challenge, controller, counterStart: i, counterStep: LANES, deriveKey: solver.deriveKey,
    }).then((solution) => solution ?? Promise.reject(new Error('not found on this lane'))));
    const solution = await Promise.any(lanes).catch(() => null);
    if (!solution) throw new Error(signal.aborted ? 'aborted' : 'The human verification could not be completed');
    return btoa(JSON.stringify({
      challenge: { parameters: challenge.parameters, signature: challenge.signature },
      solution: { counter: solution.counter, derivedKey: solution.derivedKey, time: solution.time },
    }));
  } finally {
    controller.abort();
    signal.removeEventListener('abort', stop);
  }
}
