/**
 * Time-based one-time passwords (RFC 6238) for the second factor: SHA-1, 6 digits, 30 s steps —
 * the only parameters every authenticator app honours (several ignore `algorithm`/`digits` in the
 * URI). A code is accepted for its step and one step either side (clock drift); the caller stores
 * the step returned by `matchTotp` and passes it back, so a code cannot be used twice and an
 * older code is refused once a newer one was accepted.
 */
import { timingSafeEqual } from 'node:crypto';
import { HOTP, Secret, TOTP } from 'otpauth';
import { LazyModule } from '../lazy-module.js';

const ALGORITHM = 'SHA1';
const DIGITS = 6;
const PERIOD = 30;
/** Steps accepted either side of the current one. */
const WINDOW = 1;
/** RFC 4226 §4: shared secrets of at least 128 bits; ours have 160. */
const MIN_SECRET_BYTES = 16;

/** A base32 secret of 160 random bits (the HMAC-SHA-1 output size, RFC 4226's recommendation). */
export function generateTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/Issuer:label?...` URI an authenticator app scans. */
export function totpUri(secret: string, account: { issuer: string; label: string }): string {
  return new TOTP({
    issuer: account.issuer, label: account.label, secret: parseSecret(secret),
    algorithm: ALGORITHM, digits: DIGITS, period: PERIOD,
  }).toString();
}

/**
 * `qrcode`, loaded on first use: ~20 ms of the start, for a page seen once per enrolment. A
 * failed import rejects with its own error.
 */
const qrcode = new LazyModule(() => import('qrcode').then((module) => module.default));

/** The URI as an SVG QR code (inline markup, no image file to serve). */
export async function totpQrSvg(uri: string): Promise<string> {
  return (await qrcode.load()).toString(uri, { type: 'svg' });
}

/** The code of the step containing `at` (default now). */
export function totpCode(secret: string, at?: Date): string {
  return codeForStep(parseSecret(secret), stepAt(at));
}

export interface MatchTotpOptions {
  /** The moment the code was entered (default now). */
  at?: Date;
  /** The step of the last accepted code; only later steps are accepted. */
  lastUsedStep?: number | null;
}

/**
 * The step `code` belongs to when it is the code of the current step or one either side and that
 * step is after `lastUsedStep`; otherwise null (malformed input included — never throws for it).
 * Every step of the window is compared in constant time, without early exit, so timing reveals
 * neither whether nor where the code matched.
 */
export function matchTotp(secret: string, code: unknown, options: MatchTotpOptions = {}): number | null {
  const key = parseSecret(secret);
  const current = stepAt(options.at);
  if (typeof code !== 'string') return null;
  const entered = code.trim();
  if (!/^[0-9]{6}$/.test(entered)) return null;
  const enteredBytes = Buffer.from(entered, 'ascii');
  const after = options.lastUsedStep ?? -1;
  let matched: number | null = null;
  // Descending, so that in the (1 in a million) case of two matching steps the earliest one is
  // kept: it advances the replay barrier the least.
  for (let step = current + WINDOW; step >= current - WINDOW; step--) {
    const equal = timingSafeEqual(enteredBytes, Buffer.from(codeForStep(key, step), 'ascii'));
    if (equal && step > after && step >= 0) matched = step;
  }
  return matched;
}

function codeForStep(key: Secret, step: number): string {
  return HOTP.generate({ secret: key, algorithm: ALGORITHM, digits: DIGITS, counter: step });
}

function stepAt(at: Date | undefined): number {
  const time = at ? at.getTime() : Date.now();
  if (!Number.isFinite(time)) throw new RangeError('Invalid date for a TOTP step');
  return TOTP.counter({ period: PERIOD, timestamp: time });
}

/** A stored secret that is not base32 or too short is a programming error, not a wrong code. */
function parseSecret(secret: string): Secret {
  const key = Secret.fromBase32(secret);
  if (key.bytes.length < MIN_SECRET_BYTES) throw new TypeError('TOTP secret is shorter than 128 bits');
  return key;
}
