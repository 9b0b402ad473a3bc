/**
 * `GET /api/model-info/{model}`: the model-level facts the web client draws lists and forms from —
 * label, order, archivable, API methods and wizard titles, reports, the fields whose change asks
 * for `ui-effect`, and the caller's own rights — read-gated like `get_registry`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let plainKey: string;

beforeAll(async () => {
  t = await testDatabase('full');
  plainKey = (await t.run(() => createServiceAccountKey({ name: 'plain', groups: ['core.group_user'] }))).key;
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/model-info/{model}', () => {
  it('describes a model with a wizard, an effect and computed dependants', async () => {
    const res = await t.api('GET', '/api/model-info/ProjectTask');
    expect(res.statusCode).toBe(200);
    const info = res.json();
    expect(info).toMatchObject({
      model: 'ProjectTask',
      label: 'Task',
      order_by: ['sequence ASC', 'deadline ASC', 'id ASC'],
      api_methods: ['action_close', 'action_reassign', 'message_post', 'message_follow', 'message_unfollow'],
      wizards: [{ method: 'action_reassign', title: 'Reassign tasks' }],
      create: true,
      write: true,
      unlink: true,
      mail_thread: true,
    });
    expect(info.effect_fields).toContain('parent');
    expect(info.record_methods).toEqual(['action_close', 'action_reassign', 'message_post', 'message_follow', 'message_unfollow']);
    expect((await t.api('GET', '/api/model-info/ProjectStage')).json().mail_thread).toBe(false);
    // A model-level method is an API method but not a record's.
    const users = (await t.api('GET', '/api/model-info/User')).json();
    expect(users.api_methods).toContain('set_my_language');
    expect(users.record_methods).not.toContain('set_my_language');
    expect(users.record_methods).toContain('action_reset_second_factor');
    expect(typeof info.archivable).toBe('boolean');
    expect(Array.isArray(info.reports)).toBe(true);
  });

  it('lists the reports printing the model, as the Report records say', async () => {
    const res = await t.api('GET', '/api/model-info/ProjectTask');
    const reports = res.json().reports as { id: number; name: string; format: string }[];
    const stored = await t.api('POST', '/api/query/Report', { filter_str: "Q(model='ProjectTask')", fields: ['name', 'format'] });
    expect(stored.statusCode).toBe(200);
    const rows = (stored.json().data ?? stored.json()) as { id: number; name: string; format: string }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(reports.map((r) => [r.id, r.name, r.format]).sort()).toEqual(rows.map((r) => [r.id, r.name, r.format]).sort());
    const contacts = await t.api('GET', '/api/model-info/Contact');
    expect(contacts.json().reports.map((r: { name: string }) => r.name)).not.toContain(reports[0]!.name);
  });

  it("answers the caller's own rights, and 403 without the read right", async () => {
    const asPlain = (url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${plainKey}`, 'x-db-name': t.name } });
    const users = await asPlain('/api/model-info/User');
    if (users.statusCode === 200) expect(users.json()).toMatchObject({ create: false, unlink: false });
    else expect(users.statusCode).toBe(403);
    const keys = await asPlain('/api/model-info/Group');
    expect([200, 403]).toContain(keys.statusCode);
    const apiKeys = await asPlain('/api/model-info/RecordRule');
    expect(apiKeys.statusCode).toBe(403);
    expect(apiKeys.json()).toMatchObject({ detail: expect.any(String), error: 'AccessError' });
  });

  it('404 for an unknown model', async () => {
    const res = await t.api('GET', '/api/model-info/NoSuchModel');
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBeDefined();
  });
});
