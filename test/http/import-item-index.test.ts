/**
 * The row an import reports for a refusal is the item the write path labelled the error with, read
 * as data — never parsed back out of the message (issue 25, "Hardening II"): a model check whose
 * own message begins `item 7: ` refuses a batch of records; the row reported is the record that
 * caused it, and its message is reported as the check wrote it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, UserError, fields } from 'fieldforge';
import type { ModelChange } from 'fieldforge';

export class ItemIndexProbe extends Model {
  static override _order_by = ['id ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
  };

  /** Sees the whole batch of a create; its message looks like a label on purpose. */
  static override _check_change(change: ModelChange): void {
    const names = change.op === 'create' ? change.vals.map((v) => v.name) : change.op === 'write' ? [change.vals.name] : [];
    if (names.includes('refused')) throw new UserError('item 7: this name is refused');
  }
}
`;

let t: TestDatabase;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-item-index-'));
  await writeProbeModule(root, 'item_index_probe', { 'models/index.ts': PROBE_MODELS, 'security/access.yaml': adminAccessYaml(['ItemIndexProbe']) });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['item_index_probe'] });
}, 240_000);
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

interface Answer {
  summary: { created: number; errors: number };
  details: { creates: { row: number }[]; errors: { row: number; field?: string; message: string }[] };
}

async function importing(body: Record<string, unknown>): Promise<Answer> {
  const res = await t.api('POST', '/api/import/ItemIndexProbe', body);
  expect(res.statusCode, res.body.slice(0, 600)).toBe(200);
  return res.json() as Answer;
}

describe('an import names the row a refusal is about from the error, not its text', () => {
  // Rows 1..10; row 3 is refused by the check, whose message starts `item 7: `.
  const names = ['a', 'b', 'refused', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
  const data = [['Name'], ...names.map((n) => [n])];

  it('reports the refused row itself, with the message unmangled, and imports every other row', async () => {
    for (const dry_run of [true, false]) {
      const answer = await importing({ fields: ['name'], data, dry_run });
      expect(answer.details.errors, `dry_run ${dry_run}`).toEqual([{ row: 3, message: 'item 7: this name is refused' }]);
      expect(answer.details.creates.map((c) => c.row)).toEqual([1, 2, 4, 5, 6, 7, 8, 9, 10]);
    }
    const stored = await t.api('POST', '/api/query/ItemIndexProbe', { fields: ['name'] });
    expect(stored.statusCode, stored.body).toBe(200);
    expect((stored.json() as { name: string }[]).map((r) => r.name)).toEqual(names.filter((n) => n !== 'refused'));
  });

  it('keeps the API detail of a labelled bulk refusal as before: item <index>: and the message', async () => {
    const res = await t.api('POST', '/api/bulk-create/ItemIndexProbe', [{ name: 'refused' }]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: 'item 0: item 7: this name is refused', error: 'UserError' });
  });
});
