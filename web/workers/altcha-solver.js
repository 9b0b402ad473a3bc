/**
 * The ALTCHA widget's worker (spec §4.11): solves a proof-of-work challenge off the page's thread
 * with altcha-lib's own solver (vendored from npm, the same code the server's checks are written
 * against) and its WebCrypto PBKDF2. It speaks the library's worker protocol, so
 * `solveChallengeWorkers` drives several of these on interleaved counters:
 * `{type: 'work', challenge, counterStart, counterStep, timeout}` → the solution (or null once
 * aborted or out of time), `{type: 'abort'}` stops it.
 */
import { deriveKey } from 'altcha-lib/algorithms/web/pbkdf2';
import { handler } from 'altcha-lib/workers/shared';

handler({ deriveKey });
