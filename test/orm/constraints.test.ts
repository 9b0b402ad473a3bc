/**
 * Database constraints on the PostgreSQL server: unique, required, foreign keys and on_delete
 * surface as precise ValidationErrors from model code and as 400s through the API, never as 500s.
 * The same suite runs on PGlite in `test/pglite/constraints.test.ts`.
 */
import { afterAll, beforeAll } from 'vitest';
import { integritySuite } from '../support/integrity-suite.js';
import { fixtureDatabase } from '../support/orm.js';
import type { TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields', 'orm_relations']);
});
afterAll(async () => {
  await t?.close();
});

integritySuite(() => t);
