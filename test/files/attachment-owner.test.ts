/**
 * An attachment's owner (`model`, `record`) must name a model and a positive id of an existing
 * record the caller may change, on create and update alike (issue 10, item 7): values that JSON
 * turns into 0 or that Char would turn into text ("true", "5") used to make the row invisible to
 * its own writer, and the update route then failed reading it back (500). A write that leaves any
 * record unreadable to its writer answers 200 with the id and no names.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { Attachment } from '../../modules/core/models/attachment.js';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { rows } from '../support/orm.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const HIDDEN = 'Hidden';
let t: TestDatabase;
let tmp: string;
let restrictedKey: string;
const ids = { visible: 0, hidden: 0, file: 0, ownerless: 0 };

beforeAll(async () => {
  t = await testDatabase('full');
  tmp = await mkdtemp(join(tmpdir(), 'ff-attachment-owner-'));
  t.platform.files.configure({ store: new LocalFileStore(tmp) });
  await t.run(async () => {
    ids.visible = (await ProjectTask.create({ name: 'Visible task' })).id;
    ids.hidden = (await ProjectTask.create({ name: `${HIDDEN} task` })).id;
    ids.file = await Attachment.create_from_file(Buffer.from('owned').toString('base64'), 'owned.txt', 'ProjectTask', ids.visible, 'description');
    ids.ownerless = await Attachment.create_from_file(Buffer.from('plain').toString('base64'), 'plain.txt');
    const group = (await Group.create({ name: 'Owner test restricted', identifier: 'owner_test.group_restricted' })).id;
    await RecordRule.create({ name: 'Owner test: hide tasks', model: 'ProjectTask', filter: `~Q(name__startswith='${HIDDEN}')`, groups: [group] });
    restrictedKey = (await createServiceAccountKey({ name: 'owner test restricted', groups: ['core.group_admin', 'owner_test.group_restricted'] })).key;
  });
});
afterAll(async () => {
  await t?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function send(method: 'POST' | 'PUT', url: string, rawBody: string, key = t.apiKey) {
  return t.app.inject({
    method, url, payload: rawBody,
    headers: { authorization: `Bearer ${key}`, 'x-db-name': t.name, 'content-type': 'application/json' },
  });
}

/** Every attachment row's owner, to prove a refusal changed nothing. */
function owners() {
  return t.run(() => rows<{ id: number; model: string | null; record: number | null }>(sql`SELECT id, model, record FROM attachment ORDER BY id`));
}

describe('owner values', () => {
  it('the inputs that answered 500 or hid the file are 400s naming the field and what it expects', async () => {
    const before = await owners();
    const cases: [string, string][] = [
      ['{"model": 1e-400}', "Invalid value 0 for field 'model' of Attachment: expected the name of the owning model"],
      ['{"model": true}', "Invalid value true for field 'model' of Attachment: expected the name of the owning model"],
      ['{"model": 5, "record": 1}', "Invalid value 5 for field 'model' of Attachment: expected the name of the owning model"],
      ['{"model": 1e400}', "Invalid value Infinity (a number beyond ±1.8e308) for field 'model' of Attachment: expected a string"],
      ['{"record": 0}', "Invalid value 0 for field 'record' of Attachment: expected the id of the owning record (an integer from 1 to 2147483647)"],
      ['{"record": -5}', "Invalid value -5 for field 'record' of Attachment: expected the id of the owning record (an integer from 1 to 2147483647)"],
      ['{"record": 2147483648}', "Invalid value 2147483648 for field 'record' of Attachment: expected an integer from -2147483647 to 2147483647"],
      ['{"model": "SaleOrder", "record": 999999}', "An attachment cannot belong to 'SaleOrder': no such model"],
      [`{"model": "Attachment", "record": ${ids.ownerless}}`, 'An attachment cannot belong to a Attachment record: Attachment records belong to other records themselves'],
      ['{"model": null}', `An attachment's owner record ${ids.visible} needs its model: set 'model' too, or clear 'record'`],
    ];
    for (const [body, detail] of cases) {
      const res = await send('PUT', `/api/update/Attachment/${ids.file}`, body);
      expect(res.statusCode, `${body}: ${res.body.slice(0, 300)}`).toBe(400);
      expect(res.json()).toMatchObject({ error: 'ValidationError', detail });
    }
    const created = await send('POST', '/api/create/Attachment', '{"name": "x.txt", "model": 5, "record": 1}');
    expect(created.statusCode, created.body).toBe(400);
    expect(created.json().detail).toBe("Invalid value 5 for field 'model' of Attachment: expected the name of the owning model");
    const orphan = await send('POST', '/api/create/Attachment', '{"name": "x.txt", "record": 3}');
    expect(orphan.json()).toMatchObject({ error: 'ValidationError', detail: "An attachment's owner record 3 needs its model: set 'model' too, or clear 'record'" });
    const method = await send('POST', '/api/execute/Attachment/create_from_file',
      JSON.stringify({ request_body: { inputs: { file_content: 'eA==', filename: 'x.txt', model: 'ProjectTask', record: 0 } } }));
    expect(method.json()).toMatchObject({ error: 'ValidationError', detail: expect.stringContaining("for field 'record' of Attachment") });
    const removal = await send('POST', '/api/execute/Attachment/remove_from_attachment',
      JSON.stringify({ request_body: { inputs: { model: 'ProjectTask', record: 2147483648, field: 'description' } } }));
    expect(removal.json()).toMatchObject({ error: 'UserError', detail: 'remove_from_attachment needs model, record and field' });
    expect(await owners()).toEqual(before);
    // The file is still its owner's, and readable.
    expect((await send('POST', `/api/fetch/Attachment/${ids.file}`, '{"fields": ["model", "record"]}')).json())
      .toMatchObject({ model: 'ProjectTask', record: ids.visible });
  });

  it('an owner record that does not exist is refused exactly like one the caller may not read (404)', async () => {
    const before = await owners();
    const hidden = await send('PUT', `/api/update/Attachment/${ids.file}`, `{"record": ${ids.hidden}}`, restrictedKey);
    const missing = await send('PUT', `/api/update/Attachment/${ids.file}`, '{"record": 999999}', restrictedKey);
    expect(hidden.statusCode, hidden.body).toBe(404);
    expect(missing.statusCode, missing.body).toBe(404);
    expect(hidden.json()).toMatchObject({ error: 'NotFound', detail: `ProjectTask ${ids.hidden} does not exist` });
    expect(missing.json()).toMatchObject({ error: 'NotFound', detail: 'ProjectTask 999999 does not exist' });
    // An unrestricted administrator passes every rule: the record itself must be there.
    const admin = await send('POST', '/api/create/Attachment', '{"name": "y.txt", "model": "ProjectTask", "record": 999999}');
    expect(admin.json()).toMatchObject({ error: 'NotFound', detail: 'ProjectTask 999999 does not exist' });
    expect(await owners()).toEqual(before);
    // A real owner is accepted and the file read back as written.
    const moved = await send('PUT', `/api/update/Attachment/${ids.ownerless}`, `{"model": "ProjectTask", "record": ${ids.visible}}`);
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toEqual({ id: ids.ownerless, name: 'plain.txt', display_name: 'plain.txt' });
  });
});

describe('a write that hides its own record', () => {
  it('answers 200 with the id and no names, and the write stands', async () => {
    const task = await t.run(async () => (await ProjectTask.create({ name: 'About to hide' })).id);
    const res = await send('PUT', `/api/update/ProjectTask/${task}`, `{"name": "${HIDDEN} by its writer"}`, restrictedKey);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: task, name: null, display_name: null });
    expect(await t.run(async () => (await ProjectTask.browse([task]))[0]!.name)).toBe(`${HIDDEN} by its writer`);
    // It no longer exists for that writer; the administrator still sees it.
    expect((await send('POST', `/api/fetch/ProjectTask/${task}`, '{}', restrictedKey)).statusCode).toBe(404);
    expect((await send('PUT', `/api/update/ProjectTask/${task}`, '{"sequence": 3}')).json()).toMatchObject({ id: task, name: `${HIDDEN} by its writer` });
  });
});
