/**
 * After-commit work model code queues while an import writes a row (issue 26 item 1): a
 * notification and a file release queued for a row the import then refuses are never sent nor
 * performed — the row's savepoint takes them with it — while the same queued for a row that
 * commits are, once each, however often the bisection of a refused batch ran that row.
 *
 * Real bus (the platform's, listened to as a worker's socket hub does), real file store (a
 * scratch directory). Whether a sweep ran at all is seen through a canary: bytes of this database
 * no row uses, handed to the sweep as fresh, which any sweep of the database removes.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageKey } from '../../src/files/content-address.js';
import { currentEnv } from '../../src/orm/env.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { noteFreshKey } from '../../src/files/file-removal.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import type { BusMessage } from '../../src/realtime/bus.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { UOW_PROBE } from '../support/uow-probe.js';

let t: TestDatabase;
let tmp: string;
let local: LocalFileStore;
const heard: BusMessage[] = [];

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const keyOf = (content: string) => storageKey(t.name, sha(content));
const exists = async (key: string) => (await local.stat(key)) !== null;
const notified = () => heard.filter((m) => m.frame.type === 'notification' && (m.frame.data as Record<string, unknown>).title === 'UoW probe').map((m) => (m.frame.data as Record<string, unknown>).message);

/** Polls `check` until true or `ms` pass; true when it held in time. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** An attachment `uow-<tag>.txt` whose bytes are in the store before the upload (which so schedules no sweep of its own). */
async function attachmentFor(tag: string): Promise<{ id: number; key: string }> {
  const content = `bytes of ${tag}`;
  await local.put(keyOf(content), Buffer.from(content));
  const res = await t.api('POST', '/api/create/Attachment', { name: `uow-${tag}.txt`, base64: Buffer.from(content).toString('base64') });
  expect(res.statusCode, res.body).toBe(200);
  return { id: res.json().id, key: keyOf(content) };
}

/** Bytes no row uses, handed to the sweep: the next sweep of the database removes them. */
async function canary(name: string): Promise<string> {
  const key = keyOf(`canary ${name}`);
  await local.put(key, Buffer.from(`canary ${name}`));
  noteFreshKey(t.name, key);
  return key;
}

async function namesOf(model: string, filter: Record<string, unknown> = {}): Promise<string[]> {
  const rows = await t.run(() => new QuerySet(currentEnv().registry.meta(model)).filter(filter).order_by('id ASC').read(['name']));
  return rows.map((r) => r.name as string);
}

const attachmentsNamed = (tags: string[]) => namesOf('Attachment', { name__in: tags.map((g) => `uow-${g}.txt`) });

async function importing(rows: string[]) {
  const res = await t.api('POST', '/api/import/UowProbe', { fields: ['name', 'trigger'], data: [['Name', 'Trigger'], ...rows.map((r) => [r, r])] });
  expect(res.statusCode, res.body.slice(0, 600)).toBe(200);
  return res.json() as { summary: { created: number; errors: number }; details: { errors: { row: number; message: string }[] } };
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ff-uow-import-'));
  await writeProbeModule(join(tmp, 'modules'), 'uow_probe', { 'models/index.ts': UOW_PROBE, 'security/access.yaml': adminAccessYaml(['UowProbe']) });
  t = await testDatabase('core', [join(tmp, 'modules')]);
  await t.platform.install(t.name, { init: ['uow_probe'] });
  local = new LocalFileStore(join(tmp, 'store'));
  t.platform.files.configure({ store: local, uploadLimit: 1 << 20 });
  t.platform.bus.subscribe((m) => heard.push(m), (db) => db === t.name);
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('an import row model code queued after-commit work for', () => {
  it('refused: its notification is never sent and its file release never performed', async () => {
    const file = await attachmentFor('refused-alone');
    const swept = await canary('refused-alone');
    heard.length = 0;
    const answer = await importing(['refused-alone']);
    expect(answer.summary).toMatchObject({ created: 0, errors: 1 });
    expect(answer.details.errors).toEqual([{ row: 1, message: expect.stringContaining('The probe refuses refused-alone') }]);
    await new Promise((r) => setTimeout(r, 1500)); // what a commit starts (a push, a sweep) has long run by now
    expect(notified()).toEqual([]);
    expect(await exists(swept), 'no sweep ran').toBe(true);
    expect(await attachmentsNamed(['refused-alone'])).toEqual(['uow-refused-alone.txt']);
    expect(await exists(file.key)).toBe(true);
  });

  it('committed: sent and performed once each, also after the batch it was in was refused and bisected', async () => {
    const files = { a: await attachmentFor('kept-a'), refused: await attachmentFor('refused-b'), c: await attachmentFor('kept-c') };
    heard.length = 0;
    const answer = await importing(['kept-a', 'refused-b', 'kept-c']);
    expect(answer.summary).toMatchObject({ created: 2, errors: 1 });
    expect(answer.details.errors).toEqual([{ row: 2, message: expect.stringContaining('The probe refuses refused-b') }]);
    expect(await eventually(async () => notified().length >= 2)).toBe(true);
    expect(await eventually(async () => !(await exists(files.a.key)) && !(await exists(files.c.key))), 'the kept rows’ bytes are swept').toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(notified()).toEqual(['kept-a', 'kept-c']);
    expect(await attachmentsNamed(['kept-a', 'refused-b', 'kept-c'])).toEqual(['uow-refused-b.txt']);
    expect(await exists(files.refused.key)).toBe(true);
    expect(await namesOf('UowProbe')).toEqual(['kept-a', 'kept-c']);
  });
});
