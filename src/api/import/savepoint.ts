/**
 * Work that may fail without failing the import: it runs in a savepoint of the unit of work
 * (`orm/unit-of-work.ts`), rolled back on failure so nothing of it stays — a record is whole, with
 * its lines, or absent, and what it queued goes with it: the field assignments model code made,
 * the record changes reported for record-changed pings, the after-commit jobs (a notification, a
 * file sweep).
 */
import { FieldForgeError } from '../../errors.js';
import { currentEnv } from '../../orm/env.js';

export type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: FieldForgeError };

/**
 * Runs `fn` in a savepoint. A refusal (a `FieldForgeError` other than a 5xx) is rolled back and
 * answered; anything else — a bug, a lost connection, a lock timeout — still fails the request.
 */
export async function inSavepoint<T>(fn: () => Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await currentEnv().work.savepoint(fn) };
  } catch (error) {
    if (error instanceof FieldForgeError && error.status < 500) return { ok: false, error };
    throw error;
  }
}

/** Runs `fn` in a savepoint and undoes all it did, whatever happens (a dry run). */
export function rolledBack<T>(fn: () => Promise<T>): Promise<T> {
  return currentEnv().work.savepoint(fn, { keep: () => false });
}

/** Runs `fn` in a savepoint and keeps what it did only when `keep()` says so afterwards (atomic mode). */
export function provisional<T>(fn: () => Promise<T>, keep: () => boolean): Promise<T> {
  return currentEnv().work.savepoint(fn, { keep });
}
