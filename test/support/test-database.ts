/**
 * A test file's own database, cloned from a template, with the platform, an in-process HTTP app
 * and the template's admin API key; `close()` drops it.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { LightMyRequestResponse } from 'fastify';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { buildApp } from '../../src/http/app.js';
import type { TransactionOptions } from '../../src/orm/transaction.js';
import { TEST_DATABASE_URL } from './services.js';
import type { TemplateSet } from './templates.js';

export interface TestDatabase {
  name: string;
  platform: Platform;
  engine: PostgresEngine;
  app: FastifyInstance;
  apiKey: string;
  /** Runs model code in the database as one unit of work (elevated unless `uid` is given). */
  run<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** An authenticated JSON request to the in-process app. */
  api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** The error a unit of work fails with; a test failure when it succeeds. */
  failure(fn: () => Promise<unknown>): Promise<Error>;
  /** Statements executed by this database while `fn` runs. */
  countStatements(fn: () => Promise<unknown>): Promise<{ count: number; statements: string[] }>;
  close(): Promise<void>;
}

export async function testDatabase(set: TemplateSet = 'full', extraRoots: string[] = []): Promise<TestDatabase> {
  const template = inject('templates')[set];
  const name = `fft_${randomBytes(5).toString('hex')}`;
  const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  await engine.clone(template.database, name);
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, ...extraRoots]));
  const app = await buildApp(platform, { dev: true });
  const db: TestDatabase = {
    name, platform, engine, app, apiKey: template.apiKey,
    run: (fn, options = {}) => platform.run(name, options, fn),
    api: (method, url, body, headers = {}) =>
      app.inject({
        method, url,
        headers: { authorization: `Bearer ${template.apiKey}`, 'x-db-name': name, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      }),
    async failure(fn) {
      try {
        await platform.run(name, {}, fn);
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected the unit of work to fail');
    },
    async countStatements(fn) {
      const database = await platform.database(name);
      const statements: string[] = [];
      const off = database.onStatement((s) => statements.push(s));
      try {
        await fn();
      } finally {
        off();
      }
      return { count: statements.length, statements };
    },
    async close() {
      await app.close();
      await engine.drop(name).catch(() => {});
      await platform.close();
    },
  };
  return db;
}
