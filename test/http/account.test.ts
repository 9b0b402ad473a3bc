/**
 * The signed-in person's own account over HTTP (Settings > My profile): changing the password
 * (current password checked, the password rule enforced, the field named, other sessions
 * revoked; sessions only) and an administrator's reset of someone's second factor
 * (`User.action_reset_second_factor`, a wizard with no inputs; 403 for others).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { totpCode } from '../../src/auth/totp.js';
import { User } from '../../modules/core/models/user.js';
import { createUserWithPassword } from '../support/browser.js';
import { solvedAltcha } from '../support/altcha.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let userKey: string;
let userId: number;
const EMAIL = 'profile@example.test';
const FIRST = 'lantern-biscuit-harbour-9';
const SECOND = 'orchard-velvet-compass-42';

beforeAll(async () => {
  t = await testDatabase('full');
  userId = await createUserWithPassword(t, { name: 'Pat Profile', email: EMAIL, password: FIRST, groups: ['core.group_user'] });
  ({ key: userKey } = await t.run(() => createServiceAccountKey({ name: 'ordinary', groups: ['core.group_user'] })));
});
afterAll(async () => { await t?.close(); });

async function signIn(password: string): Promise<{ status: number; token: string; body: Record<string, unknown> }> {
  const altcha = await solvedAltcha(t.app, t.name);
  const res = await t.app.inject({
    method: 'POST', url: '/auth/authenticate', headers: { 'content-type': 'application/json', 'x-db-name': t.name },
    payload: JSON.stringify({ email: EMAIL, password, altcha }),
  });
  const body = res.json();
  return { status: res.statusCode, token: body.access_token, body };
}

const withToken = (token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
  t.api(method, url, body, { authorization: `Bearer ${token}` });
const changePassword = (token: string, body: unknown) => withToken(token, 'POST', '/auth/password', body);
const totpEnabled = () => t.run(async () => (await User.query().filter({ id: userId }).read(['totp_enabled']))[0]!.totp_enabled);
const passwordHash = () => t.run(async () => {
  const { sql } = await import('kysely');
  const db = await t.platform.database(t.name);
  return (await sql<{ h: string }>`SELECT password_hash AS h FROM "user" WHERE id = ${userId}`.execute(db.executor)).rows[0]!.h;
});

describe('POST /auth/password', () => {
  it('refuses a wrong current password and a new one breaking the rule, naming the field; nothing changes', async () => {
    const { token } = await signIn(FIRST);
    const before = await passwordHash();
    const wrong = await changePassword(token, { current_password: 'not-my-password-at-all', new_password: SECOND });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ error: 'ValidationError', detail: 'The current password is not correct.', field: 'current_password' });
    const missing = await changePassword(token, { new_password: SECOND });
    expect(missing.json()).toMatchObject({ error: 'ValidationError', detail: 'Enter your current password.' });
    const short = await changePassword(token, { current_password: FIRST, new_password: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({ error: 'ValidationError', detail: 'Password must be at least 12 characters long.', field: 'new_password' });
    const email = await changePassword(token, { current_password: FIRST, new_password: EMAIL });
    expect(email.json().detail).toBe('Password must not be the e-mail address, nor the part of it before the @.');
    const same = await changePassword(token, { current_password: FIRST, new_password: FIRST });
    expect(same.json().detail).toBe('The new password must differ from the current one.');
    expect(await passwordHash()).toBe(before);
  });

  it('changes it: the new password signs in, the old does not, other sessions end and this one goes on', async () => {
    const { token: other } = await signIn(FIRST);
    const { token } = await signIn(FIRST);
    const res = await changePassword(token, { current_password: FIRST, new_password: SECOND });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ changed: true, other_sessions_revoked: expect.any(Number) });
    expect(res.json().other_sessions_revoked).toBeGreaterThanOrEqual(1);
    expect((await withToken(token, 'POST', '/api/query/User', { fields: ['name'] })).statusCode).toBe(200);
    expect((await withToken(other, 'POST', '/api/query/User', { fields: ['name'] })).statusCode).toBe(401);
    expect((await signIn(FIRST)).status).toBe(401);
    expect((await signIn(SECOND)).status).toBe(200);
  });

  it('is for people: an API key gets 400, no credential 401', async () => {
    const res = await t.api('POST', '/auth/password', { current_password: FIRST, new_password: SECOND });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe('This route is for a signed-in person (a session token), not an API key');
    const anonymous = await t.app.inject({ method: 'POST', url: '/auth/password', headers: { 'x-db-name': t.name, 'content-type': 'application/json' }, payload: '{}' });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('resetting a second factor', () => {
  it('is a wizard with no inputs titled "Reset second factor"', async () => {
    const res = await t.api('POST', '/api/action-meta/User/action_reset_second_factor', { context: { active_ids: [userId] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ title: 'Reset second factor', fields: {}, arch: [] });
  });

  it('an administrator turns it off (the next sign-in needs no code); anyone else gets 403', async () => {
    const { token } = await signIn(SECOND);
    const setup = await withToken(token, 'POST', '/auth/2fa/setup');
    expect(setup.statusCode, setup.body).toBe(200);
    const enabled = await withToken(token, 'POST', '/auth/2fa/enable', { code: totpCode(setup.json().secret) });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect((await signIn(SECOND)).body['2fa_required']).toBe(true);

    const refused = await t.api('POST', '/api/execute/User/action_reset_second_factor', { ids: [userId] }, { authorization: `Bearer ${userKey}` });
    expect(refused.statusCode).toBe(403);
    expect(await totpEnabled()).toBe(true);

    const reset = await t.api('POST', '/api/execute/User/action_reset_second_factor', { ids: [userId] });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.headers['x-action-close']).toBe('1');
    expect(reset.headers['x-action-reload']).toBe('1');
    expect(await totpEnabled()).toBe(false);
    const again = await signIn(SECOND);
    expect(again.status).toBe(200);
    expect(again.token).toEqual(expect.any(String));
  });
});
