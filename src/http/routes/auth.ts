/**
 * Sign-in routes (spec §4.1, §4.11, §5): the ALTCHA challenge, authenticate (ALTCHA, then e-mail
 * and password, then a session or a pending second factor), the second factor's verify step,
 * refresh (rotation with reuse detection), logout, and enrolment in the second factor. Anonymous
 * routes select the database like the API and run elevated; the signed-in ones resolve the
 * credential like `/api/*` and act on the caller's own user only. With `cookie: true` the session
 * is also set as browser cookies (`session-cookies.ts`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAltchaChallenge, HUMAN_VERIFICATION_FAILED, verifyAltcha } from '../../auth/altcha.js';
import { disableSecondFactor, enableSecondFactor, setupSecondFactor } from '../../auth/second-factor.js';
import { refreshSession, revokeSession, verifyAccessToken, type SessionConfig, type SessionTokens } from '../../auth/sessions.js';
import { completeSecondFactor, signIn } from '../../auth/sign-in.js';
import { purposeKey } from '../../config/secret.js';
import { readPlatformState } from '../../db/platform-state.js';
import { AuthenticationError, BadRequest, DatabaseBusy } from '../../errors.js';
import { withEnv } from '../../orm/env.js';
import type { Platform } from '../../platform/platform.js';
import type { DatabaseSelector } from '../database-selection.js';
import { unitOfWork } from '../request-context.js';
import { clearSessionCookies, REFRESH_COOKIE, setSessionCookies } from '../session-cookies.js';
import { RequestBody } from './request-body.js';

/** Route options of a signed-in `/auth/*` route: the credential is resolved as for `/api/*`. */
const SIGNED_IN = { config: { unitOfWork: true, authenticated: true } } as const;

export interface AuthRouteOptions {
  /** Access-token lifetime in hours (`FF_SESSION_HOURS`). */
  sessionHours: number;
  /** ALTCHA difficulty (largest secret counter); altcha.ts's default unless given (tests lower it). */
  altchaMaxNumber?: number;
}

export function registerAuthRoutes(app: FastifyInstance, platform: Platform, selector: DatabaseSelector, options: AuthRouteOptions): void {
  const altchaSecret = purposeKey(platform.secret, 'altcha').toString('base64url');

  /** The database of an anonymous auth request, refused while it installs. */
  async function anonymousDatabase(req: FastifyRequest): Promise<SessionConfig> {
    const dbName = await selector.select(req);
    const db = await platform.database(dbName);
    if ((await readPlatformState(db.executor)).installing) {
      throw new DatabaseBusy(`Database '${dbName}' is installing or upgrading modules; retry shortly`);
    }
    return { dbName, secret: platform.secret, sessionHours: options.sessionHours };
  }

  // A challenge is for the database the request selects, like the sign-in it precedes: a solution
  // is accepted by that database only (its name is signed into the challenge).
  app.get('/altcha/challenge', async (req, reply) => {
    const { dbName } = await anonymousDatabase(req);
    void reply.header('Cache-Control', 'no-store');
    return createAltchaChallenge(altchaSecret, dbName, options.altchaMaxNumber ? { maxNumber: options.altchaMaxNumber } : {});
  });

  app.post('/auth/authenticate', async (req, reply) => {
    const config = await anonymousDatabase(req);
    const body = new RequestBody(req.body);
    // The proof of work comes first: without it nothing else is looked at.
    const db = await platform.database(config.dbName);
    if (!(await verifyAltcha(db.executor, altchaSecret, body.raw.altcha, config.dbName))) {
      return humanVerificationFailed(reply);
    }
    const email = body.string('email');
    const password = body.string('password');
    if (!email || !password) throw new BadRequest("Send 'email' and 'password'");
    const answer = await platform.run(config.dbName, {}, () => signIn(email, password, config));
    if (!answer) throw new AuthenticationError('Invalid e-mail or password');
    return 'access_token' in answer ? withCookies(req, reply, answer, body.boolean('cookie'), config) : answer;
  });

  app.post('/auth/2fa/verify', async (req, reply) => {
    const config = await anonymousDatabase(req);
    const body = new RequestBody(req.body);
    const { raw } = body;
    // Committed whatever the outcome: the pending token is spent by this attempt.
    const tokens = await platform.run(config.dbName, {}, () => completeSecondFactor(raw.pending_token, raw.code, config));
    if (!tokens) throw new AuthenticationError('Invalid or expired sign-in, or wrong code: sign in again');
    return withCookies(req, reply, tokens, body.boolean('cookie'), config);
  });

  app.post('/auth/refresh', async (req, reply) => {
    const config = await anonymousDatabase(req);
    const { raw } = new RequestBody(req.body);
    // A browser's refresh token rides in its cookie (SameSite=Strict, path /auth: never sent by
    // another site's request), and the new tokens go back the same way.
    const fromCookie = raw.refresh_token === undefined ? req.cookies[REFRESH_COOKIE] : undefined;
    const refreshToken = fromCookie ?? raw.refresh_token;
    // Committed whatever the outcome: a reused token's family stays revoked.
    const outcome = await platform.run(config.dbName, {}, () => refreshSession(refreshToken, config));
    if ('refused' in outcome) {
      if (fromCookie) clearSessionCookies(reply);
      throw new AuthenticationError(outcome.refused === 'reused'
        ? 'This refresh token was already used: the session is revoked, sign in again'
        : 'Invalid or expired refresh token');
    }
    return withCookies(req, reply, outcome.tokens, fromCookie !== undefined, config);
  });

  app.post('/auth/logout', SIGNED_IN, (req, reply) => unitOfWork(req, async () => {
    const sessionId = sessionOf(req);
    await withEnv({ su: true }, () => revokeSession(sessionId, 'logout'));
    clearSessionCookies(reply);
    return { message: 'Signed out' };
  }));

  app.post('/auth/2fa/setup', SIGNED_IN, (req) => unitOfWork(req, async () => {
    sessionOf(req);
    return withEnv({ su: true }, () => setupSecondFactor(req.ff!.uid, platform.secret));
  }));

  app.post('/auth/2fa/enable', SIGNED_IN, (req) => unitOfWork(req, async () => {
    sessionOf(req);
    const { code } = new RequestBody(req.body).raw;
    return withEnv({ su: true }, () => enableSecondFactor(req.ff!.uid, code, platform.secret));
  }));

  app.post('/auth/2fa/disable', SIGNED_IN, (req) => unitOfWork(req, async () => {
    sessionOf(req);
    const { code } = new RequestBody(req.body).raw;
    return withEnv({ su: true }, () => disableSecondFactor(req.ff!.uid, code, platform.secret));
  }));
}

/** The caller's session; these routes are for people signed in, not for API keys. */
function sessionOf(req: FastifyRequest): number {
  const sessionId = req.ff!.principal.sessionId;
  if (sessionId === undefined || sessionId === null) {
    throw new BadRequest('This route is for a signed-in person (a session token), not an API key');
  }
  return sessionId;
}

/** The tokens, also set as the browser's session cookies when asked (`cookie: true`) — then with the CSRF token. */
async function withCookies(req: FastifyRequest, reply: FastifyReply, tokens: SessionTokens, cookie: boolean, config: SessionConfig) {
  if (!cookie) return tokens;
  const claims = await verifyAccessToken(tokens.access_token, config.dbName, config.secret);
  const csrf = setSessionCookies(req, reply, tokens, claims!.sessionId, config.secret, config.sessionHours);
  return { ...tokens, csrf_token: csrf };
}

function humanVerificationFailed(reply: FastifyReply) {
  return reply.status(400).send({ success: false, message: HUMAN_VERIFICATION_FAILED });
}
