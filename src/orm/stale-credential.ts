/**
 * The request guard's refusal as the ORM sees it: every statement of model code passes
 * `execute-sql.ts`, which turns the guard's SQLSTATE into `StaleCredential` for the request to be
 * resolved again. The guard itself — its function, its check — is `auth/request-guard.ts`.
 */

/** SQLSTATE raised by `ff_request_guard` (class FF is ours; PostgreSQL never uses it). */
export const GUARD_SQLSTATE = 'FFB00';

/** Thrown when the guard refused: the remembered credential no longer holds; resolve again. */
export class StaleCredential extends Error {
  constructor() {
    super('The remembered credential or registry version is no longer current');
  }
}
