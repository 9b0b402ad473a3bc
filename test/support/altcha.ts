/** Solves the app's ALTCHA challenge for database `db` like the browser widget does, for sign-in tests. */
import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { FastifyInstance } from 'fastify';

export async function solvedAltcha(app: FastifyInstance, db: string, url = '/altcha/challenge'): Promise<string> {
  const res = await app.inject({ method: 'GET', url, headers: { 'x-db-name': db } });
  if (res.statusCode !== 200) throw new Error(`challenge: ${res.statusCode} ${res.body}`);
  const challenge = res.json() as Challenge;
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 10_000 });
  if (!solution) throw new Error('the test challenge was not solved');
  return Buffer.from(JSON.stringify({ challenge: { parameters: challenge.parameters, signature: challenge.signature }, solution })).toString('base64');
}
