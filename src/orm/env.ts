/**
 * The environment a piece of model code runs in — database, registry, user, companies, context,
 * its unit of work (`unit-of-work.ts`: transaction, savepoints, after-commit jobs) and the ports
 * the layers above provide (`ports.ts`) — carried by the async call chain (AsyncLocalStorage), so
 * model code never takes a connection argument: `await CurrencyRate.get_rate(…)` inside a method
 * uses the caller's database and transaction. Units of work start in `transaction.ts`; this file
 * imports nothing at run time, so every file of the ORM can reach the environment without a cycle.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TenantDatabase } from '../db/engine.js';
import type { AccessPolicy } from './access-policy.js';
import type { EnvPorts } from './ports.js';
import type { Registry } from './registry.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * Who acts (the principal), in which database, through which unit of work, with which ports.
 * A copy made by `withEnv` (elevated, another context) shares the unit of work of the original.
 */
export interface Env {
  readonly db: TenantDatabase;
  readonly registry: Registry;
  /** The acting user (`User` id), or null for the platform itself (install, CLI). */
  readonly uid: number | null;
  readonly companyId: number | null;
  readonly companyIds: readonly number[];
  readonly context: Readonly<Record<string, unknown>>;
  /** Elevated: access rules are not applied (install, CLI, server acting for a visitor). */
  readonly su: boolean;
  /** What the acting principal may do (`access-policy.ts`, compiled by `access/`); null = unrestricted (the platform). */
  readonly access: AccessPolicy | null;
  /** The acting session (a person's request); null for an API key or the platform. */
  readonly sessionId: number | null;
  /**
   * The security version (`ff_state`, moved by every change to who may do what) the unit of work
   * started at — a request's credential and profile were read at it, `Platform.run` reads it —
   * or null when not known. What is derived from memberships and grants may be kept per version
   * (messaging's recipients' profiles).
   */
  readonly securityVersion: number | null;
  /** The transaction, its savepoints, after-commit jobs, pending assignments and record changes. */
  readonly work: UnitOfWork;
  /** What the unit of work reaches above the ORM: bus, file storage, change feed, request guard. */
  readonly ports: EnvPorts;
}

const storage = new AsyncLocalStorage<Env>();

/** The environment of the current call chain; throws when model code runs outside one. */
export function currentEnv(): Env {
  const env = storage.getStore();
  if (!env) throw new Error('No FieldForge environment: model code must run inside runInEnv() / a request');
  return env;
}

export function hasEnv(): boolean {
  return storage.getStore() !== undefined;
}

/** Runs `fn` with `env` as the current environment. */
export function runInEnv<T>(env: Env, fn: () => Promise<T>): Promise<T> {
  return storage.run(env, fn);
}

/** Runs `fn` in a copy of the current environment with some members replaced (e.g. `{su: true}`). */
export function withEnv<T>(changes: Partial<Env>, fn: () => Promise<T>): Promise<T> {
  return storage.run({ ...currentEnv(), ...changes }, fn);
}
