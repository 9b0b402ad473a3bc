/**
 * Small credential gaps of issue 10 §9, closed: an ALTCHA challenge belongs to the database it was
 * issued for (its name is signed into it), so one solution cannot sign in once per database; a
 * session token must carry an expiry; the Authorization scheme is case-insensitive (RFC 7235).
 */
import type { Challenge } from 'altcha-lib';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { FastifyInstance } from 'fastify';
import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAccessToken } from '../../src/auth/sessions.js';
import { purposeKey } from '../../src/config/secret.js';
import { buildApp } from '../../src/http/app.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/** The administrator every template database has (test/global-setup.ts). */
const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-for-tests';
const FAILED = { success: false, message: 'Human verification failed.' };

let t: TestDatabase;
let other: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  t = await testDatabase('core');
  other = await testDatabase('core');
  app = await buildApp(t.platform, { dev: false, altchaMaxNumber: 10 });
});
afterAll(async () => {
  await app?.close();
  await other?.close();
  await t?.close();
});

async function challengeFor(db: string): Promise<Challenge> {
  const res = await app.inject({ method: 'GET', url: '/altcha/challenge', headers: { 'x-db-name': db } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Challenge;
}

async function solved(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 10_000 });
  return Buffer.from(JSON.stringify({ challenge: { parameters: challenge.parameters, signature: challenge.signature }, solution })).toString('base64');
}

function authenticate(db: string, altcha: string) {
  return app.inject({
    method: 'POST', url: '/auth/authenticate', headers: { 'x-db-name': db, 'content-type': 'application/json' },
    payload: JSON.stringify({ email: EMAIL, password: PASSWORD, altcha }),
  });
}

function query(db: string, authorization: string) {
  return app.inject({
    method: 'POST', url: '/api/query/User', headers: { 'x-db-name': db, 'content-type': 'application/json', authorization },
    payload: JSON.stringify({ fields: ['name'], limit: 1 }),
  });
}

describe('ALTCHA challenges belong to one database', () => {
  it('signs the database into the challenge', async () => {
    expect((await challengeFor(t.name)).parameters.data).toEqual({ db: t.name });
  });

  it('refuses a solution in another database, even before it is spent in its own', async () => {
    const altcha = await solved(await challengeFor(t.name));
    const elsewhere = await authenticate(other.name, altcha);
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json()).toEqual(FAILED);
    const home = await authenticate(t.name, altcha);
    expect(home.statusCode, home.body).toBe(200);
    // Spent at home: refused everywhere now.
    expect((await authenticate(t.name, altcha)).json()).toEqual(FAILED);
    expect((await authenticate(other.name, altcha)).json()).toEqual(FAILED);
  });

  it('refuses a challenge whose database was rewritten (the signature covers it)', async () => {
    const challenge = await challengeFor(t.name);
    const rewritten = { ...challenge, parameters: { ...challenge.parameters, data: { db: other.name } } };
    const res = await authenticate(other.name, await solved(rewritten));
    expect(res.json()).toEqual(FAILED);
  });

  it('answers a challenge for an unknown database with 404, like sign-in', async () => {
    const res = await app.inject({ method: 'GET', url: '/altcha/challenge', headers: { 'x-db-name': 'fft_no_such_database' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'DatabaseNotFound' });
  });
});

describe('session tokens', () => {
  async function signedIn(): Promise<string> {
    const res = await authenticate(t.name, await solved(await challengeFor(t.name)));
    expect(res.statusCode, res.body).toBe(200);
    return res.json().access_token as string;
  }

  /** A token signed with the platform's own session key, claims as given: only the claims differ. */
  function forged(claims: Record<string, unknown>, expires: boolean): Promise<string> {
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
    if (expires) jwt.setExpirationTime('1h');
    return jwt.sign(purposeKey(t.platform.secret, 'session-token'));
  }

  it('are refused without an expiry, and accepted with one', async () => {
    const { sub, db, sid } = decodeJwt(await signedIn());
    const withExpiry = await forged({ sub, db, sid }, true);
    const withoutExpiry = await forged({ sub, db, sid }, false);
    expect((await query(t.name, `Bearer ${withExpiry}`)).statusCode).toBe(200);
    expect(await verifyAccessToken(withoutExpiry, t.name, t.platform.secret)).toBeNull();
    const res = await query(t.name, `Bearer ${withoutExpiry}`);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'AuthenticationError' });
  });

  it('are refused without the session or the database claim', async () => {
    const { sub, db, sid } = decodeJwt(await signedIn());
    expect(await verifyAccessToken(await forged({ sub, db }, true), t.name, t.platform.secret)).toBeNull();
    expect(await verifyAccessToken(await forged({ sub, sid }, true), t.name, t.platform.secret)).toBeNull();
  });
});

describe('the Authorization scheme', () => {
  it('is case-insensitive and may be followed by several spaces, for API keys and session tokens', async () => {
    const token = (await authenticate(t.name, await solved(await challengeFor(t.name)))).json().access_token as string;
    for (const credential of [t.apiKey, token]) {
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR', 'Bearer  ']) {
        const res = await query(t.name, `${scheme} ${credential}`);
        expect(res.statusCode, `${scheme} ${credential.slice(0, 6)}…: ${res.body}`).toBe(200);
      }
    }
  });

  it('still refuses other schemes and malformed values', async () => {
    for (const header of [`Basic ${t.apiKey}`, `Bearer`, `Bearer${t.apiKey}`, `Bearer ${t.apiKey} extra`, `Token ${t.apiKey}`]) {
      const res = await query(t.name, header);
      expect(res.statusCode, header.slice(0, 20)).toBe(401);
    }
  });
});
