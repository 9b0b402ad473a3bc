/**
 * ALTCHA proof of work for sign-in (spec §4.1, §4.11, §5): `GET /altcha/challenge` sends what
 * `createAltchaChallenge` returns, and `POST /auth/authenticate` goes on only when `verifyAltcha`
 * accepts the request's top-level `altcha` value. Otherwise the answer is 'Human verification failed.'.
 *
 * Challenges use altcha v2's deterministic mode. The server picks a secret counter, derives that
 * counter's PBKDF2 key and publishes the first half of the key as the prefix to find. It signs the
 * full key (`keySignature`) and signs the parameters, expiry included. The browser has to try
 * counters 0, 1, … until it reaches the secret one (the widget spreads them over its workers). The
 * server checks an answer with two HMACs and never runs the KDF itself, so forged or junk payloads
 * cost it almost nothing.
 *
 * A challenge belongs to one database: its name is in the signed parameters (`data.db`), and a
 * solution is accepted only by that database. The spent list is per database while the signature
 * is the platform's, so without the binding one solved challenge would sign in once in every
 * database of the platform.
 *
 * A solution counts once. Single use is decided in the database: the first verification INSERTs the
 * challenge's signature into `ff_altcha_spent`, and every later one (any worker, any moment) finds
 * it there. Rows are kept until the challenge expires, because after that the signed expiry refuses
 * it anyway. They are deleted at most once a minute per worker and database.
 */
import { createHmac, randomInt } from 'node:crypto';
import { createChallenge, verifySolution, type Challenge, type ChallengeParameters, type Solution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { sql } from '../db/sql-fragment.js';
import type { SqlExecutor } from '../db/sql-executor.js';

export const HUMAN_VERIFICATION_FAILED = 'Human verification failed.';

/** PBKDF2 is native (WebCrypto) in every browser. ARGON2ID would need Node 24.7. */
const ALGORITHM = 'PBKDF2/SHA-256';
/**
 * Difficulty: 5,000 PBKDF2 iterations per attempt (~1 ms on one desktop core, so WebCrypto's
 * per-call overhead is negligible) times a counter drawn from [maxNumber/2, maxNumber]. The default
 * 2,000 means ~1,500 attempts, ~1.5–2 CPU-seconds. The widget spreads that over all cores: ~0.3 s
 * on a laptop and ~1–2 s on a mid-range phone, which a person signing in accepts. A credential-
 * stuffing bot pays the same for every guess. The lower bound of maxNumber/2 keeps a lucky small
 * counter from making a challenge free.
 */
const COST = 5_000;
const DEFAULT_MAX_NUMBER = 2_000;
const DEFAULT_EXPIRES_IN_SECONDS = 10 * 60;
/** A real payload is ~700 base64 characters. The cap stops huge strings before decoding. */
const MAX_PAYLOAD_LENGTH = 4_096;
const PURGE_INTERVAL_MS = 60_000;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const HEX_256 = /^[0-9a-f]{64}$/;

/**
 * Separate keys for the two signatures, both derived from the one configured secret. An empty
 * secret would make every signature forgeable, so it is refused.
 */
function signingSecrets(secret: string): { hmacSignatureSecret: string; hmacKeySignatureSecret: string } {
  if (typeof secret !== 'string' || secret.length === 0) throw new Error('The ALTCHA secret must be a non-empty string');
  const derive = (label: string) => createHmac('sha256', secret).update(label).digest('hex');
  return { hmacSignatureSecret: derive('fieldforge/altcha/challenge'), hmacKeySignatureSecret: derive('fieldforge/altcha/key') };
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * A signed challenge for sign-in to `database`, ready to send as JSON. The expiry
 * (`parameters.expiresAt`) and the database (`parameters.data.db`) are signed with it.
 */
export async function createAltchaChallenge(
  secret: string,
  database: string,
  options: { expiresInSeconds?: number; maxNumber?: number } = {},
): Promise<Challenge> {
  if (typeof database !== 'string' || database.length === 0) throw new Error('An ALTCHA challenge belongs to a database: name it');
  const expiresIn = positiveInteger('expiresInSeconds', options.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS);
  const maxNumber = positiveInteger('maxNumber', options.maxNumber ?? DEFAULT_MAX_NUMBER);
  if (maxNumber > 0xffffffff) throw new RangeError(`maxNumber must fit in 32 bits, got ${maxNumber}`);
  return createChallenge({
    algorithm: ALGORITHM,
    cost: COST,
    counter: randomInt(Math.ceil(maxNumber / 2), maxNumber + 1),
    deriveKey,
    expiresAt: Math.floor(Date.now() / 1000) + expiresIn,
    data: { db: database },
    ...signingSecrets(secret),
  });
}

/**
 * The spent-solution table: the challenge's signature (unique per challenge, because nonce and salt
 * are random and signed) and the challenge's expiry. Run it outside a transaction. Two workers
 * creating it at the same moment can collide in the catalog, and that is harmless.
 */
export async function ensureAltchaStore(db: SqlExecutor): Promise<void> {
  // The catalog first: CREATE INDEX IF NOT EXISTS takes a SHARE lock on the table (blocking
  // sign-ins until an install commits) even when the index exists.
  const { rows: [present] } = await sql<{ table: boolean; index: boolean }>`
    SELECT to_regclass('public.ff_altcha_spent') IS NOT NULL AS table, to_regclass('public.ff_altcha_spent_expires_at') IS NOT NULL AS index`.execute(db);
  if (!present?.table) {
    await ignoringConcurrentCreate(sql`CREATE TABLE IF NOT EXISTS ff_altcha_spent (
      signature text PRIMARY KEY,
      expires_at timestamptz NOT NULL)`.execute(db));
  }
  if (!present?.index) {
    await ignoringConcurrentCreate(sql`CREATE INDEX IF NOT EXISTS ff_altcha_spent_expires_at ON ff_altcha_spent (expires_at)`.execute(db));
  }
}

async function ignoringConcurrentCreate(statement: Promise<unknown>): Promise<void> {
  try {
    await statement;
  } catch (err) {
    // 23505: a concurrent CREATE won the race in pg_type/pg_class; 42P07: it already committed.
    const code = (err as { code?: unknown }).code;
    if (code !== '23505' && code !== '42P07') throw err;
  }
}

/**
 * True only for a fresh, correctly solved challenge signed with `secret` for `database` (whose
 * handle `db` is), and only the first time it is presented. Every worker sees the same answer. Any
 * malformed, forged, expired, wrong, replayed or other database's payload gives false, never an
 * error. Database failures (no `ff_altcha_spent`, connection lost) are internal errors and do throw.
 */
export async function verifyAltcha(db: SqlExecutor, secret: string, payload: unknown, database: string): Promise<boolean> {
  const secrets = signingSecrets(secret);
  const parsed = parsePayload(payload);
  // Compared before the HMACs, which then prove the name is the one this server signed.
  if (!parsed || parsed.challenge.parameters.data?.db !== database) return false;
  let verified = false;
  try {
    ({ verified } = await verifySolution({ ...parsed, deriveKey, ...secrets }));
  } catch {
    return false;
  }
  if (!verified) return false;
  const spent = await spend(db, parsed.challenge.signature!, parsed.challenge.parameters.expiresAt!);
  if (spent) await purgeOccasionally(db);
  return spent;
}

/**
 * The widget's value: base64 of `{"challenge": {"parameters", "signature"}, "solution": {"counter",
 * "derivedKey", "time"}}`. Anything else, including the widget's test-mode and v1 payloads, is
 * null. Missing `keySignature`, `expiresAt` or `data.db` is refused too: every challenge this server
 * issues has them, so verification never re-derives a key and never accepts a challenge without
 * expiry or database.
 */
function parsePayload(value: unknown): { challenge: Challenge; solution: Solution } | null {
  if (typeof value !== 'string' || value.length > MAX_PAYLOAD_LENGTH || value.length % 4 !== 0 || !BASE64.test(value)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (!isRecord(decoded) || !isRecord(decoded.challenge) || !isRecord(decoded.solution)) return null;
  const { parameters, signature } = decoded.challenge;
  const { counter, derivedKey } = decoded.solution;
  if (!isRecord(parameters) || typeof signature !== 'string' || !HEX_256.test(signature)) return null;
  if (typeof parameters.keySignature !== 'string' || !HEX_256.test(parameters.keySignature)) return null;
  if (typeof parameters.expiresAt !== 'number' || !Number.isFinite(parameters.expiresAt)) return null;
  if (!isRecord(parameters.data) || typeof parameters.data.db !== 'string') return null;
  if (!Number.isSafeInteger(counter) || typeof derivedKey !== 'string') return null;
  return {
    challenge: { parameters: parameters as unknown as ChallengeParameters, signature },
    solution: { counter: counter as number, derivedKey },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Records the solution as spent and returns true if this call recorded it. The database clock also
 * checks freshness here, so a worker whose clock lags cannot accept a challenge the purge already
 * considers expired.
 */
async function spend(db: SqlExecutor, signature: string, expiresAt: number): Promise<boolean> {
  const { rows } = await sql<{ spent: number }>`
    INSERT INTO ff_altcha_spent (signature, expires_at)
    SELECT ${signature}::text, to_timestamp(${expiresAt}::double precision)
    WHERE to_timestamp(${expiresAt}::double precision) > now()
    ON CONFLICT (signature) DO NOTHING
    RETURNING 1 AS spent`.execute(db);
  return rows.length === 1;
}

/** Deletes spent solutions whose challenges have expired and returns how many were deleted. */
export async function purgeSpentAltchas(db: SqlExecutor): Promise<number> {
  const result = await sql`DELETE FROM ff_altcha_spent WHERE expires_at <= now()`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** When each database handle was last purged (per worker). */
const lastPurge = new WeakMap<SqlExecutor, number>();

/** Purges at most once per interval per handle, so the table holds about one expiry window of sign-ins. */
async function purgeOccasionally(db: SqlExecutor): Promise<void> {
  const now = Date.now();
  if (now - (lastPurge.get(db) ?? 0) < PURGE_INTERVAL_MS) return;
  lastPurge.set(db, now);
  // Housekeeping only: a failed purge must not turn an accepted solution into an error.
  await purgeSpentAltchas(db).catch(() => undefined);
}
