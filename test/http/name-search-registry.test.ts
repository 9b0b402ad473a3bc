/**
 * POST /api/name_search/{model} and GET /api/get_registry/{model} (spec §4.7, §2.1), and the
 * rule that internal fields (User.password_hash, ApiKey.key_hash) never cross the API: not in
 * the registry, not readable, not filterable, not orderable, not groupable, not writable.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv } from '../../src/orm/env.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
const ids = {} as { acme: number; alice: number; alicia: number; bob: number; zeds: number[]; archived: number };

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    ids.acme = (await Contact.create({ name: 'Acme Corp', is_company: true, email: 'info@acme.test' })).id;
    ids.alice = (await Contact.create({ name: 'Alice Smith', email: 'alice@example.test', parent: ids.acme })).id;
    ids.alicia = (await Contact.create({ name: 'Alicia Keys', email: 'ak@music.test' })).id;
    ids.bob = (await Contact.create({ name: 'Bob', email: 'bob@acme.test' })).id;
    ids.archived = (await Contact.create({ name: 'Alice Archived', active: false })).id;
    ids.zeds = (await Contact.create_many(Array.from({ length: 12 }, (_, i) => ({ name: `Zed ${String(i).padStart(2, '0')}` })))).map((r) => r.id);
  });
});
afterAll(async () => { await t?.close(); });

async function nameSearch(model: string, body: unknown) {
  const res = await t.api('POST', `/api/name_search/${model}`, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('name_search', () => {
  it('answers a bare array of {id, display_name}', async () => {
    expect(await nameSearch('Contact', { term: 'alic' })).toEqual([
      { id: ids.alice, display_name: 'Alice Smith' },
      { id: ids.alicia, display_name: 'Alicia Keys' },
    ]);
  });

  it("matches the model's name-search fields (Contact: name and email)", async () => {
    expect(await nameSearch('Contact', { term: 'acme.test' })).toEqual([
      { id: ids.acme, display_name: 'Acme Corp' },
      { id: ids.bob, display_name: 'Bob' },
    ]);
  });

  it('honours limit and filter', async () => {
    const limited = await nameSearch('Contact', { term: 'zed', limit: 3 });
    expect(limited).toEqual(ids.zeds.slice(0, 3).map((id, i) => ({ id, display_name: `Zed 0${i}` })));
    expect(await nameSearch('Contact', { term: 'a', filter: 'Q(is_company=True)' })).toEqual([{ id: ids.acme, display_name: 'Acme Corp' }]);
    expect(await nameSearch('Contact', { term: 'alice', filter: `Q(parent=${ids.acme})` })).toEqual([{ id: ids.alice, display_name: 'Alice Smith' }]);
  });

  it('leaves archived records out unless the filter names active', async () => {
    expect((await nameSearch('Contact', { term: 'archived' }))).toEqual([]);
    expect(await nameSearch('Contact', { term: 'archived', filter: 'Q(active=False)' })).toEqual([{ id: ids.archived, display_name: 'Alice Archived' }]);
  });

  it('an empty term lists records up to the limit', async () => {
    const all = await nameSearch('Contact', { limit: 100 });
    // The 4 + 12 contacts made here, and the contacts of the database's users (messaging gives each user one).
    const ofUsers = await t.run(() => Contact.query('Q(user__isnull=False)').count());
    expect(ofUsers).toBeGreaterThan(0);
    expect(all).toHaveLength(4 + 12 + ofUsers);
    for (const rec of all) expect(Object.keys(rec).sort()).toEqual(['display_name', 'id']);
  });

  it('refuses a bad filter, limit or term type with a 400', async () => {
    const filter = await t.api('POST', '/api/name_search/Contact', { term: 'a', filter: 'Q(nope=1)' });
    expect(filter.statusCode).toBe(400);
    expect(filter.json()).toMatchObject({ detail: "Unknown field 'nope' on model Contact (at position 2)", error: 'QuerySyntaxError' });
    const limit = await t.api('POST', '/api/name_search/Contact', { term: 'a', limit: 0 });
    expect(limit.statusCode).toBe(400);
    expect(limit.json()).toMatchObject({ error: 'BadRequest' });
    const term = await t.api('POST', '/api/name_search/Contact', { term: ['a'] });
    expect(term.statusCode).toBe(400);
    expect(term.json()).toMatchObject({ detail: "'term' must be a string", error: 'BadRequest' });
  });
});

describe('get_registry', () => {
  it('describes every field keyed by name, with type, required, max_length, default, related_model, related_name, choices', async () => {
    const res = await t.api('GET', '/api/get_registry/ProjectTask');
    expect(res.statusCode, res.body).toBe(200);
    const reg = res.json();
    for (const name of ['id', 'identifier', 'display_name', 'created_date', 'created_by', 'updated_date', 'updated_by', 'name', 'stage', 'tags', 'subtasks', 'remaining_hours']) {
      expect(reg, name).toHaveProperty(name);
    }
    expect(reg.name).toMatchObject({ type: 'Char', required: true, max_length: 255 });
    expect(reg.description).toMatchObject({ type: 'Text' });
    expect(reg.description.required).toBeUndefined();
    expect(reg.priority).toMatchObject({ type: 'Selection', default: '0', choices: [['0', 'Normal'], ['1', 'Important'], ['2', 'Urgent']] });
    expect(reg.sequence).toMatchObject({ type: 'Integer', default: 10 });
    expect(reg.active).toMatchObject({ type: 'Boolean', default: true });
    expect(reg.deadline).toMatchObject({ type: 'Date' });
    expect(reg.planned_hours).toMatchObject({ type: 'Float', default: 0 });
    expect(reg.stage).toMatchObject({ type: 'ManyToOne', related_model: 'ProjectStage', related_name: 'tasks', on_delete: 'RESTRICT' });
    expect(reg.project).toMatchObject({ type: 'ManyToOne', related_model: 'ProjectProject', related_name: 'tasks', on_delete: 'CASCADE' });
    expect(reg.tags).toMatchObject({ type: 'ManyToMany', related_model: 'ProjectTag', related_name: 'tasks' });
    expect(reg.subtasks).toMatchObject({ type: 'OneToMany', related_model: 'ProjectTask' });
    expect(reg.created_by).toMatchObject({ type: 'ManyToOne', related_model: 'User' });
    expect(reg.identifier).toMatchObject({ type: 'Char', max_length: 255 });
    for (const entry of Object.values<any>(reg)) expect(typeof entry.type).toBe('string');
  });

  it('lists reverse relations on the target (ProjectStage.tasks, ContactTag.contacts)', async () => {
    const stage = (await t.api('GET', '/api/get_registry/ProjectStage')).json();
    expect(stage.tasks).toMatchObject({ type: 'OneToMany', related_model: 'ProjectTask' });
    const tag = (await t.api('GET', '/api/get_registry/ContactTag')).json();
    expect(tag.contacts).toMatchObject({ type: 'ManyToMany', related_model: 'Contact' });
    expect(tag.name).toMatchObject({ type: 'Char', required: true, max_length: 64 });
    const contact = (await t.api('GET', '/api/get_registry/Contact')).json();
    expect(contact.parent).toMatchObject({ type: 'ManyToOne', related_model: 'Contact', related_name: 'children', filter: 'Q(is_company=True)' });
    expect(contact.children).toMatchObject({ type: 'OneToMany', related_model: 'Contact' });
  });

  it('answers 404 for an unknown model', async () => {
    const res = await t.api('GET', '/api/get_registry/NoSuchModel');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ detail: "Model 'NoSuchModel' does not exist", error: 'NotFound' });
  });
});

describe('internal fields never cross the API', () => {
  const INTERNAL: [string, string][] = [['User', 'password_hash'], ['ApiKey', 'key_hash']];

  it('are absent from the registry', async () => {
    for (const [model, field] of INTERNAL) {
      const reg = (await t.api('GET', `/api/get_registry/${model}`)).json();
      expect(Object.keys(reg), model).not.toContain(field);
      expect(Object.keys(reg).length).toBeGreaterThan(5);
    }
  });

  it('are absent from default reads, fetches and name search', async () => {
    for (const [model, field] of INTERNAL) {
      const list = await t.api('POST', `/api/query/${model}`, {});
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json().length).toBeGreaterThan(0);
      expect(list.body).not.toContain(field);
      const id = list.json()[0].id;
      const one = await t.api('POST', `/api/fetch/${model}/${id}`, {});
      expect(one.statusCode, one.body).toBe(200);
      expect(one.body).not.toContain(field);
      expect((await t.api('POST', `/api/name_search/${model}`, {})).body).not.toContain(field);
    }
  });

  it('cannot be requested, even through a relation', async () => {
    const cases: [string, string[], string][] = [
      ['User', ['password_hash'], "Unknown field 'password_hash' on model User in path 'password_hash'"],
      ['ApiKey', ['name', 'key_hash'], "Unknown field 'key_hash' on model ApiKey in path 'key_hash'"],
      ['Contact', ['created_by.password_hash'], "Unknown field 'password_hash' on model User in path 'created_by.password_hash'"],
      ['ServiceAccount', ['api_keys.key_hash'], "Unknown field 'key_hash' on model ApiKey in path 'api_keys.key_hash'"],
    ];
    for (const [model, fields, detail] of cases) {
      for (const route of [`/api/query/${model}`, `/api/fetch/${model}/1`]) {
        const res = await t.api('POST', route, { fields });
        expect(res.statusCode, `${route} ${fields}`).toBe(400);
        expect(res.json()).toMatchObject({ detail, error: 'BadRequest' });
      }
    }
  });

  it('cannot be filtered, ordered, grouped or aggregated on (400)', async () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['User', { filter_str: "Q(password_hash__startswith='$')" }, "Unknown field 'password_hash' on model User (at position 2)", 'QuerySyntaxError'],
      ['User', { filter_str: 'Q(password_hash__isnull=False)' }, "Unknown field 'password_hash' on model User (at position 2)", 'QuerySyntaxError'],
      ['ApiKey', { filter_str: "Q(key_hash='00')" }, "Unknown field 'key_hash' on model ApiKey (at position 2)", 'QuerySyntaxError'],
      ['ServiceAccount', { filter_str: "Q(api_keys__key_hash__startswith='a')" }, "Unknown field 'key_hash' on model ApiKey (at position 2)", 'QuerySyntaxError'],
      ['Contact', { filter_str: "Q(created_by__password_hash__isnull=True)" }, "Unknown field 'password_hash' on model User (at position 2)", 'QuerySyntaxError'],
      ['User', { order_by: ['password_hash ASC'] }, "Unknown field 'password_hash' on model User", 'QuerySyntaxError'],
      ['User', { group_fields: ['password_hash'] }, "Cannot group by 'password_hash': not a groupable stored field of User", 'BadRequest'],
      ['ApiKey', { footer_aggregates: ['key_hash'] }, "Cannot aggregate 'key_hash': not a stored field of ApiKey", 'BadRequest'],
    ];
    for (const [model, body, detail, error] of cases) {
      const res = await t.api('POST', `/api/query/${model}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ detail, error });
    }
    const ns = await t.api('POST', '/api/name_search/User', { filter: "Q(password_hash='x')" });
    expect(ns.statusCode).toBe(400);
    expect(ns.json()).toMatchObject({ detail: "Unknown field 'password_hash' on model User (at position 2)", error: 'QuerySyntaxError' });
  });

  it('are ignored in writes: a planted key hash neither replaces the real one nor breaks the key', async () => {
    const hashes = () => t.run(async () => (await sql<{ id: number; key_hash: string }>`SELECT id, key_hash FROM api_key ORDER BY id`.execute(currentEnv().work.trx)).rows);
    const before = await hashes();
    for (const row of before) {
      const res = await t.api('PUT', `/api/update/ApiKey/${row.id}`, { key_hash: '0'.repeat(64), name: 'renamed key' });
      expect(res.statusCode, res.body).toBe(200);
    }
    expect(await hashes()).toEqual(before);
    // The key still authenticates.
    expect((await t.api('POST', '/api/query/ApiKey', { fields: ['name'] })).statusCode).toBe(200);
    const created = await t.api('POST', '/api/create/User', { name: 'No hash', password_hash: 'x' });
    expect(created.statusCode, created.body).toBe(200);
    const stored = await t.run(async () =>
      (await sql<{ password_hash: string | null }>`SELECT password_hash FROM "user" WHERE id = ${created.json().id}`.execute(currentEnv().work.trx)).rows[0]!.password_hash);
    expect(stored).toBeNull();
  });
});
