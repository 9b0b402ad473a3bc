/**
 * The ALTCHA widget's worker (spec §4.11): solves a proof-of-work challenge off the page's thread
 * with altcha-lib's own solver (vendored from npm, the same code the server's checks are written
 * against) and its WebCrypto PBKDF2. It speaks the library's worker protocol, so
 * `solveChallengeWorkers` drives several of these on interleaved counters:
 * `{type: 'work', challenge, counterStart, counterStep, timeout}` → the solution (or null once
 * aborted or out of time), `{type: 'abort'}` stops it.
 *
 * A worker has no import map: the widget passes the library modules' URLs, resolved by the
 * page's map, in this script's query (`pbkdf2`, `shared`); only this server's own URLs are
 * imported. Messages that arrive while they load are kept and handed over in order.
 */
/** @type {MessageEvent[]} */
const early = [];
self.onmessage = (event) => early.push(event);

/** @param {string} name */
function libraryUrl(name) {
  const url = new URL(new URL(import.meta.url).searchParams.get(name) ?? '', self.location.href);
  if (url.origin !== self.location.origin || !url.pathname.startsWith('/web/vendor/')) throw new Error(`altcha-solver: no vendored module for ${name}`);
  return url.href;
}

const [{ deriveKey }, { handler }] = await Promise.all([
  /** @type {Promise<typeof import('altcha-lib/algorithms/web/pbkdf2')>} */ (import(libraryUrl('pbkdf2'))),
  /** @type {Promise<typeof import('altcha-lib/workers/shared')>} */ (import(libraryUrl('shared'))),
]);
handler({ deriveKey });
for (const event of early) /** @type {(event: MessageEvent) => void} */ (self.onmessage)(event);
