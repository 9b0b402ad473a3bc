/**
 * What the ORM tests share: the fixture-module root, a test database with fixture modules
 * installed, and short ways to reach a model and run raw SQL inside a unit of work.
 */
import { fileURLToPath } from 'node:url';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { currentEnv } from '../../src/orm/env.js';
import type { Model, ModelClass } from '../../src/orm/model.js';
import { testDatabase, type TestDatabase } from './test-database.js';
import type { TemplateSet } from './templates.js';

/** Test-only modules (`orm_*`, `mod_*`), found beside the built-in ones. */
export const FIXTURE_MODULES = fileURLToPath(new URL('../fixtures/modules', import.meta.url));

/** A record with its fields reachable without casts (tests read whatever fields they declared). */
export type Rec = Model & Record<string, any>;

/** A test database cloned from `set` with the given fixture modules installed on top. */
export async function fixtureDatabase(set: TemplateSet, modules: string[]): Promise<TestDatabase> {
  const t = await testDatabase(set, [FIXTURE_MODULES]);
  await t.platform.install(t.name, { init: modules });
  return t;
}

/** The composed class of `name` in the current environment's database. */
export function model(name: string): ModelClass {
  return currentEnv().registry.meta(name).cls;
}

/** Rows of raw SQL (the `sql` tag's, or Kysely's in older tests) run in the current unit of work. */
export async function rows<R = Record<string, any>>(query: { execute(db: SqlExecutor): Promise<{ rows: R[] }> }): Promise<R[]> {
  return (await query.execute(currentEnv().work.trx)).rows;
}
