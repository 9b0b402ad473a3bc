/**
 * ALTCHA verification (spec §4.11, §5) against real solutions computed with altcha-lib's solver
 * and a real database. A payload counts only if it is fresh, correctly solved, signed by this
 * server and seen for the first time, and that holds across workers (separate pools). Bad input
 * gives false and never an error. Spent solutions are purged once their challenges expire.
 */
import { randomBytes } from 'node:crypto';
import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { createAltchaChallenge, ensureAltchaStore, purgeSpentAltchas, verifyAltcha } from '../../src/auth/altcha.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const SECRET = `altcha-test-${randomBytes(8).toString('hex')}`;
/** Keeps solving to a few PBKDF2 rounds. */
const EASY = { maxNumber: 10 };

let t: TestDatabase;
let db: SqlExecutor;
const extraHandles: Kysely<any>[] = [];

beforeAll(async () => {
  t = await testDatabase('core');
  db = (await t.platform.database(t.name)).executor;
  await ensureAltchaStore(db);
  await ensureAltchaStore(db); // idempotent
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  // Other pools must be gone before the test database is dropped.
  await Promise.all(extraHandles.map((handle) => handle.destroy()));
  await t?.close();
});

/** A separate pool to the test database, standing in for another worker process. */
function otherWorker(): Kysely<any> {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${t.name}`;
  const pool = new pg.Pool({ connectionString: url.href, max: 4 });
  // Dropping the test database terminates its sessions; an idle client's error must not crash the run.
  pool.on('error', () => {});
  const handle = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  extraHandles.push(handle);
  return handle;
}

/** The widget's hidden-input value: base64 of `{challenge: {parameters, signature}, solution}`. */
function encode(body: unknown): string {
  return Buffer.from(JSON.stringify(body)).toString('base64');
}

async function solve(challenge: Challenge) {
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 10_000 });
  if (!solution) throw new Error('the test challenge was not solved');
  return solution;
}

/** A freshly issued and solved challenge, as the widget would post it. */
async function solvedPayload(secret = SECRET, options: { expiresInSeconds?: number; maxNumber?: number } = EASY) {
  const challenge = await createAltchaChallenge(secret, t.name, options);
  const solution = await solve(challenge);
  const payload = encode({ challenge: { parameters: challenge.parameters, signature: challenge.signature }, solution });
  return { challenge, solution, payload };
}

async function spentCount(signature: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ff_altcha_spent WHERE signature = ${signature}`.execute(db);
  return rows[0]!.n;
}

describe('createAltchaChallenge', () => {
  it('issues a signed challenge with a signed expiry ten minutes out by default', async () => {
    const before = Math.floor(Date.now() / 1000);
    const challenge = await createAltchaChallenge(SECRET, t.name);
    expect(challenge.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(challenge.parameters.keySignature).toMatch(/^[0-9a-f]{64}$/);
    expect(challenge.parameters.algorithm).toBe('PBKDF2/SHA-256');
    expect(challenge.parameters.expiresAt).toBeGreaterThanOrEqual(before + 600);
    expect(challenge.parameters.expiresAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);
    // It is plain JSON for GET /altcha/challenge.
    expect(JSON.parse(JSON.stringify(challenge))).toEqual(challenge);
  });

  it('sets the work by maxNumber: the counter to reach lies in [maxNumber/2, maxNumber]', async () => {
    for (let i = 0; i < 5; i++) {
      const { solution } = await solvedPayload(SECRET, { maxNumber: 8 });
      expect(solution.counter).toBeGreaterThanOrEqual(4);
      expect(solution.counter).toBeLessThanOrEqual(8);
    }
  });

  it('refuses an empty secret and nonsensical options', async () => {
    await expect(createAltchaChallenge('', 'x')).rejects.toThrow();
    await expect(createAltchaChallenge(SECRET, t.name, { expiresInSeconds: 0 })).rejects.toThrow(RangeError);
    await expect(createAltchaChallenge(SECRET, t.name, { maxNumber: 1.5 })).rejects.toThrow(RangeError);
  });
});

describe('verifyAltcha', () => {
  it('accepts a valid solution once and refuses it the second time', async () => {
    const { challenge, payload } = await solvedPayload();
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(true);
    expect(await spentCount(challenge.signature!)).toBe(1);
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(false);
    expect(await verifyAltcha(otherWorker(), SECRET, payload, t.name)).toBe(false);
  });

  it('refuses a solution another worker already recorded as spent', async () => {
    const { challenge, payload } = await solvedPayload();
    await sql`INSERT INTO ff_altcha_spent (signature, expires_at) VALUES (${challenge.signature!}, now() + interval '10 minutes')`.execute(db);
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(false);
  });

  it('gives exactly one true for concurrent verifications of one solution through two pools', async () => {
    const workerA = otherWorker();
    const workerB = otherWorker();
    for (let round = 0; round < 8; round++) {
      const { payload } = await solvedPayload();
      const results = await Promise.all([workerA, workerB, workerA, workerB].map((handle) => verifyAltcha(handle, SECRET, payload, t.name)));
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });

  it('refuses a payload whose signature was altered', async () => {
    const { challenge, solution } = await solvedPayload();
    const signature = challenge.signature!;
    const altered = (signature[0] === '0' ? '1' : '0') + signature.slice(1);
    expect(await verifyAltcha(db, SECRET, encode({ challenge: { parameters: challenge.parameters, signature: altered }, solution }), t.name)).toBe(false);
    expect(await spentCount(altered)).toBe(0);
    // The untouched payload still works: only the alteration was refused.
    expect(await verifyAltcha(db, SECRET, encode({ challenge: { parameters: challenge.parameters, signature }, solution }), t.name)).toBe(true);
  });

  it('refuses signed parameters that were changed (a later expiry, an easier prefix)', async () => {
    const { challenge, solution } = await solvedPayload();
    const { parameters, signature } = challenge;
    const later = { ...parameters, expiresAt: parameters.expiresAt! + 3600 };
    expect(await verifyAltcha(db, SECRET, encode({ challenge: { parameters: later, signature }, solution }), t.name)).toBe(false);
    const easier = { ...parameters, keyPrefix: parameters.keyPrefix.slice(0, 2) };
    expect(await verifyAltcha(db, SECRET, encode({ challenge: { parameters: easier, signature }, solution }), t.name)).toBe(false);
  });

  it('refuses a challenge signed with another secret', async () => {
    const { payload } = await solvedPayload(`other-${SECRET}`);
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(false);
    expect(await verifyAltcha(db, `other-${SECRET}`, payload, t.name)).toBe(true); // solved correctly, just not ours
  });

  it('refuses an expired challenge', async () => {
    const { challenge, payload } = await solvedPayload(SECRET, { expiresInSeconds: 1, maxNumber: 10 });
    const expiresAtMs = challenge.parameters.expiresAt! * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAtMs - Date.now()) + 1100));
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(false);
    expect(await spentCount(challenge.signature!)).toBe(0);
  });

  it('lets the database clock decide freshness: a worker whose clock lags still refuses an expired challenge', async () => {
    // Issued "two minutes ago" with a one-minute lifetime: expired a minute ago.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 120_000);
    const { payload } = await solvedPayload(SECRET, { expiresInSeconds: 60, maxNumber: 10 });
    // This worker's clock still says "two minutes ago", so only the database can tell it expired.
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(false);
  });

  it('refuses a wrong answer: the key of another counter, or an altered key', async () => {
    const { challenge, solution } = await solvedPayload();
    const wrongCounter = solution.counter + 1;
    const password = Buffer.alloc(16 + 4);
    Buffer.from(challenge.parameters.nonce, 'hex').copy(password);
    password.writeUInt32BE(wrongCounter, 16);
    const { derivedKey } = await deriveKey(challenge.parameters, Buffer.from(challenge.parameters.salt, 'hex'), password);
    const wrong = { counter: wrongCounter, derivedKey: Buffer.from(derivedKey).toString('hex') };
    const body = (answer: unknown) => encode({ challenge: { parameters: challenge.parameters, signature: challenge.signature }, solution: answer });
    expect(await verifyAltcha(db, SECRET, body(wrong), t.name)).toBe(false);
    const flipped = (solution.derivedKey.at(-1) === '0' ? '1' : '0');
    expect(await verifyAltcha(db, SECRET, body({ ...solution, derivedKey: solution.derivedKey.slice(0, -1) + flipped }), t.name)).toBe(false);
    expect(await verifyAltcha(db, SECRET, body({ counter: solution.counter, derivedKey: challenge.parameters.keyPrefix }), t.name)).toBe(false);
    expect(await spentCount(challenge.signature!)).toBe(0);
    // A wrong answer does not burn the challenge: the right one is still accepted.
    expect(await verifyAltcha(db, SECRET, body(solution), t.name)).toBe(true);
  });

  it('refuses missing, non-string, garbage and huge values without throwing', async () => {
    const { challenge, solution, payload } = await solvedPayload();
    const signed = { parameters: challenge.parameters, signature: challenge.signature };
    const { keySignature: _, ...withoutKeySignature } = challenge.parameters;
    const { expiresAt: __, ...withoutExpiry } = challenge.parameters;
    const bad: unknown[] = [
      undefined, null, '', 0, 42, true, {}, [], [payload], { challenge: signed, solution },
      'not base64!', 'AAAA', payload.slice(0, -4), `${payload}====`, ` ${payload}`, payload.replace(/[A-Za-z]/, '*'),
      encode('a string'), encode(null), encode([signed, solution]), Buffer.from('{"challenge":').toString('base64'),
      encode({ challenge: null, solution: null, test: true }), // the widget's test mode
      encode({ algorithm: 'SHA-256', challenge: 'abc', number: 1, salt: 'x', signature: challenge.signature }), // v1 shape
      encode({ challenge: signed }), encode({ solution }),
      encode({ challenge: { parameters: challenge.parameters }, solution }),
      encode({ challenge: { ...signed, parameters: withoutKeySignature }, solution }),
      encode({ challenge: { ...signed, parameters: withoutExpiry }, solution }),
      encode({ challenge: signed, solution: { ...solution, counter: '7' } }),
      encode({ challenge: signed, solution: { ...solution, counter: -1 } }),
      encode({ challenge: signed, solution: { ...solution, derivedKey: 12 } }),
      encode({ challenge: signed, solution: { ...solution, derivedKey: solution.derivedKey.toUpperCase() } }),
      encode({ challenge: signed, solution, padding: 'x'.repeat(5000) }), // well-formed but over the cap
      'A'.repeat(20_000_000),
    ];
    for (const value of bad) {
      await expect(verifyAltcha(db, SECRET, value, t.name), JSON.stringify(value)?.slice(0, 80)).resolves.toBe(false);
    }
    expect(await spentCount(challenge.signature!)).toBe(0);
    expect(await verifyAltcha(db, SECRET, payload, t.name)).toBe(true);
  });
});

describe('spent-solution cleanup', () => {
  async function seed(prefix: string) {
    await sql`INSERT INTO ff_altcha_spent (signature, expires_at) VALUES
      (${`${prefix}-expired-1`}, now() - interval '1 second'),
      (${`${prefix}-expired-2`}, now() - interval '1 day'),
      (${`${prefix}-live`}, now() + interval '5 minutes')`.execute(db);
  }
  async function remaining(prefix: string): Promise<string[]> {
    const { rows } = await sql<{ signature: string }>`SELECT signature FROM ff_altcha_spent WHERE signature LIKE ${`${prefix}-%`} ORDER BY signature`.execute(db);
    return rows.map((r) => r.signature);
  }

  it('purgeSpentAltchas deletes exactly the expired rows', async () => {
    await seed('purge');
    expect(await purgeSpentAltchas(db)).toBeGreaterThanOrEqual(2);
    expect(await remaining('purge')).toEqual(['purge-live']);
  });

  it('a successful verification purges expired rows, at most once a minute per handle', async () => {
    const worker = otherWorker();
    await seed('first');
    expect(await verifyAltcha(worker, SECRET, (await solvedPayload()).payload, t.name)).toBe(true);
    expect(await remaining('first')).toEqual(['first-live']);
    // Within the minute, the same handle does not purge again.
    await seed('again');
    expect(await verifyAltcha(worker, SECRET, (await solvedPayload()).payload, t.name)).toBe(true);
    expect(await remaining('again')).toEqual(['again-expired-1', 'again-expired-2', 'again-live']);
    // Refused payloads never touch the table.
    expect(await verifyAltcha(otherWorker(), SECRET, 'garbage=', t.name)).toBe(false);
    expect(await remaining('again')).toHaveLength(3);
  });
});
