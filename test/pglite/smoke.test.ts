/**
 * The embedded default must not rot: the whole platform on PGlite (no DATABASE_URL) — create a
 * database with contacts and project, make an API key, then drive the generic API through the
 * HTTP app. PGlite's initdb takes seconds, so the file creates ONE database and its steps build
 * on each other, in order.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { createEngine } from '../../src/db/create-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { Platform } from '../../src/platform/platform.js';
import { READ_GUARD } from '../support/guard-text.js';

let dataDir: string;
let platform: Platform;
let app: FastifyInstance;
let key: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-pglite-smoke-'));
  const engine = createEngine({ dataDir });
  expect(engine.kind).toBe('pglite');
  platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  const created = await createDatabase(platform, 'main', { modules: ['contacts', 'project'], adminPassword: 'smoke-admin-password' });
  expect(created.installed).toEqual(['core', 'contacts', 'messaging', 'project']);
  ({ key } = await platform.run('main', {}, () => createServiceAccountKey({ name: 'smoke', groups: ['core.group_admin', 'core.group_user'] })));
  app = await buildApp(platform);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await platform?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, credential = key) {
  return app.inject({
    method, url,
    headers: {
      authorization: `Bearer ${credential}`, 'x-db-name': 'main',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<any> {
  const res = await api(method, url, body);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
  return res.json();
}

const ids: Record<string, number> = {};

describe('PGlite smoke', () => {
  it('keeps the database in the data directory', () => {
    expect(existsSync(join(dataDir, 'databases', 'main'))).toBe(true);
  });

  it('refuses a request without a valid key', async () => {
    expect((await api('POST', '/api/query/Contact', {}, `ff_${'x'.repeat(43)}`)).statusCode).toBe(401);
  });

  it('creates contacts', async () => {
    ids.acme = (await ok('POST', '/api/create/Contact', { name: 'Acme Corp', is_company: true })).id;
    const ada = await ok('POST', '/api/create/Contact', { name: 'Ada Lovelace', email: 'ada@acme.test', parent: ids.acme });
    expect(ada).toMatchObject({ name: 'Ada Lovelace', display_name: 'Ada Lovelace' });
    ids.ada = ada.id;
  });

  it('creates a project and tasks', async () => {
    const [stage] = await ok('POST', '/api/query/ProjectStage', { fields: ['name'], filter_str: "Q(name='In Progress')" });
    ids.stage = stage.id;
    ids.project = (await ok('POST', '/api/create/ProjectProject', { name: 'Smoke project', customer: ids.acme })).id;
    ids.tag = (await ok('POST', '/api/create/ProjectTag', { name: 'embedded' })).id;
    ids.write = (await ok('POST', '/api/create/ProjectTask', {
      name: 'Write tests', project: ids.project, stage: ids.stage, assignee: ids.ada, planned_hours: 5, effective_hours: 2, tags: [ids.tag],
    })).id;
    ids.ship = (await ok('POST', '/api/create/ProjectTask', { name: 'Ship', project: ids.project, planned_hours: 1 })).id;
    const [project] = await ok('POST', '/api/query/ProjectProject', { fields: ['task_count'], filter_str: `Q(id=${ids.project})` });
    expect(project.task_count).toBe(2);
  });

  it('queries with nested fields and a filter across relations', async () => {
    const rows = await ok('POST', '/api/query/ProjectTask', {
      fields: ['name', 'project.customer.name', 'stage.name', 'assignee.parent.name', 'tags.name', 'remaining_hours'],
      filter_str: "Q(project__customer__name='Acme Corp') & Q(planned_hours__gte=4)",
    });
    expect(rows).toEqual([{
      id: ids.write, display_name: 'Write tests', name: 'Write tests',
      project: { id: ids.project, display_name: 'Smoke project', customer: { id: ids.acme, display_name: 'Acme Corp', name: 'Acme Corp' } },
      stage: { id: ids.stage, display_name: 'In Progress', name: 'In Progress' },
      assignee: { id: ids.ada, display_name: 'Ada Lovelace', parent: { id: ids.acme, display_name: 'Acme Corp', name: 'Acme Corp' } },
      tags: [{ id: ids.tag, display_name: 'embedded', name: 'embedded' }],
      remaining_hours: 3,
    }]);
    const counted = await ok('POST', '/api/query/ProjectTask', { fields: ['name'], filter_str: `Q(project=${ids.project})`, counter: true, order_by: ['name ASC'] });
    expect(counted.count).toBe(2);
    expect(counted.data.map((r: { name: string }) => r.name)).toEqual(['Ship', 'Write tests']);
  });

  it('fetches and updates a record, recomputing stored computed fields', async () => {
    const updated = await ok('PUT', `/api/update/ProjectTask/${ids.write}`, { effective_hours: 4.5, name: 'Write more tests' });
    expect(updated).toMatchObject({ id: ids.write, name: 'Write more tests' });
    const fetched = await ok('POST', `/api/fetch/ProjectTask/${ids.write}`, { fields: ['name', 'effective_hours', 'remaining_hours', 'project.name'] });
    expect(fetched).toMatchObject({ name: 'Write more tests', effective_hours: 4.5, remaining_hours: 0.5, project: { id: ids.project, name: 'Smoke project' } });
  });

  it('executes an API method', async () => {
    const res = await ok('POST', '/api/execute/ProjectTask/action_close', { ids: [ids.write] });
    const [done] = await ok('POST', '/api/query/ProjectStage', { fields: ['name'], filter_str: "Q(name='Done')" });
    expect(res.result).toEqual({ stage: done.id });
  });

  it('deletes a record', async () => {
    expect(await ok('DELETE', `/api/delete/ProjectTask/${ids.ship}`)).toEqual({ id: ids.ship, deleted: true });
    expect((await api('POST', `/api/fetch/ProjectTask/${ids.ship}`, {})).statusCode).toBe(404);
    const [project] = await ok('POST', '/api/query/ProjectProject', { fields: ['task_count'], filter_str: `Q(id=${ids.project})` });
    expect(project.task_count).toBe(1);
  });

  it('answers name_search', async () => {
    expect(await ok('POST', '/api/name_search/Contact', { term: 'ada' })).toEqual([{ id: ids.ada, display_name: 'Ada Lovelace' }]);
    // Contact searches e-mail too.
    expect(await ok('POST', '/api/name_search/Contact', { term: 'acme.test' })).toEqual([{ id: ids.ada, display_name: 'Ada Lovelace' }]);
  });

  it('answers get_registry', async () => {
    const registry = await ok('GET', '/api/get_registry/ProjectTask');
    expect(registry.project).toMatchObject({ type: 'ManyToOne', related_model: 'ProjectProject' });
    expect(registry.tags).toMatchObject({ type: 'ManyToMany', related_model: 'ProjectTag' });
    expect(registry.name).toMatchObject({ type: 'Char' });
    const contact = await ok('GET', '/api/get_registry/Contact');
    expect(contact.assigned_tasks).toMatchObject({ type: 'OneToMany', related_model: 'ProjectTask' });
  });

  it('confirms a remembered key inside the query, and refuses it once revoked', async () => {
    const db = await platform.database('main');
    const statements: string[] = [];
    const off = db.onStatement((s) => statements.push(s));
    try {
      await ok('POST', '/api/query/Contact', { fields: ['name'] });
    } finally {
      off();
    }
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(READ_GUARD);
    await platform.run('main', {}, () => ApiKey.query({ prefix: key.slice(0, 10) }).update({ revoked_at: new Date().toISOString() }));
    const refused = await api('POST', '/api/query/Contact', { fields: ['name'] });
    expect(refused.statusCode).toBe(401);
  });
});
