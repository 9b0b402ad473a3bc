/**
 * An error about one item of a batch carries the item as data (`FieldForgeError.item`), its
 * message stays as thrown, and only the HTTP layer writes the wire's `item <index>: ` before it
 * (CONTRACTS C1; issue 26 item 5). The same refusal of a third item reads, end to end:
 * - from the write path: `err.item === 2`, the message without any label;
 * - from a bulk route: `detail` = `item 2: ` + that message;
 * - from the import: the row of that record, with that message — found without reading a message.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FieldForgeError, UserError, ValidationError } from '../../src/errors.js';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { currentEnv } from '../../src/orm/env.js';
import { createRecords } from '../../src/orm/write/create-records.js';
import { writeEach } from '../../src/orm/write/write-records.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

export class ItemErrorProbe extends Model {
  static override _order_by = ['id ASC'];
  static override _unique_together = [['name']];
  static override fields = {
    name: fields.Char({ required: true }),
    quantity: fields.Integer(),
  };
}
`;

let t: TestDatabase;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-item-errors-'));
  await writeProbeModule(root, 'item_error_probe', { 'models/index.ts': PROBE_MODELS, 'security/access.yaml': adminAccessYaml(['ItemErrorProbe']) });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['item_error_probe'] });
  await t.run(() => createRecords(currentEnv().registry.meta('ItemErrorProbe'), [{ name: 'taken' }]));
}, 240_000);
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The refusal the write path throws for `valsList`, each record labelled with its item in `items`. */
async function refusal(valsList: Record<string, unknown>[], items: number[]): Promise<FieldForgeError> {
  const err = await t.failure(() => createRecords(currentEnv().registry.meta('ItemErrorProbe'), valsList, { items }));
  expect(err).toBeInstanceOf(FieldForgeError);
  return err as FieldForgeError;
}

const badValue = [{ name: 'a' }, { name: 'b' }, { name: 'c', quantity: 'many' }];
const badKey = [{ name: 'a' }, { name: 'b' }, { name: 'taken' }];
const VALUE_MESSAGE = /^Invalid value 'many' for field 'quantity' of ItemErrorProbe: expected an integer/;
const KEY_MESSAGE = /^.*'name' must be unique; this value cannot be used$/;

describe('the write path: the item is data, the message is not labelled', () => {
  it('a value refused in the third item (checked in node)', async () => {
    const err = await refusal(badValue, [0, 1, 2]);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.item).toBe(2);
    expect(err.message).toMatch(VALUE_MESSAGE);
    expect((err as ValidationError).expected).toMatch(/^an integer/);
  });

  it('a key the database refuses for the third item (found from the violation, not from a message)', async () => {
    const err = await refusal(badKey, [0, 1, 2]);
    expect(err.item).toBe(2);
    expect(err.message).toMatch(KEY_MESSAGE);
  });

  it("the item is whatever the caller numbers its items by (an import's rows)", async () => {
    expect((await refusal(badKey, [4, 9, 17])).item).toBe(17);
  });

  it('an update refused for its third entry', async () => {
    const ids = await t.run(async () => (await createRecords(currentEnv().registry.meta('ItemErrorProbe'), [{ name: 'u1' }, { name: 'u2' }, { name: 'u3' }])).map((r) => r.id));
    const err = await t.failure(() => writeEach(
      currentEnv().registry.meta('ItemErrorProbe'),
      ids.map((id, i) => ({ id, vals: i === 2 ? { quantity: 'many' } : { quantity: i } })),
      { items: [0, 1, 2] },
    )) as FieldForgeError;
    expect(err.item).toBe(2);
    expect(err.message).toMatch(VALUE_MESSAGE);
  });
});

describe('the HTTP layer writes the item into the detail', () => {
  it('bulk-create refusing the third item: `item 2: ` and the message of the write path', async () => {
    for (const body of [badValue, badKey]) {
      const message = (await refusal(body, [0, 1, 2])).message;
      const res = await t.api('POST', '/api/bulk-create/ItemErrorProbe', body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ detail: `item 2: ${message}`, error: 'ValidationError' });
    }
    expect(await t.run(() => currentEnv().registry.meta('ItemErrorProbe').cls.query("Q(name__in=['a', 'b', 'c'])").count())).toBe(0);
  });

  it('bulk-update refusing the third item', async () => {
    const ids = await t.run(async () => (await createRecords(currentEnv().registry.meta('ItemErrorProbe'), [{ name: 'h1' }, { name: 'h2' }, { name: 'h3' }])).map((r) => r.id));
    const res = await t.api('PUT', '/api/bulk-update/ItemErrorProbe', ids.map((id, i) => ({ id, ...(i === 2 ? { name: 'taken' } : { quantity: i }) })));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().detail).toMatch(/^item 2: .*'name' must be unique; this value cannot be used$/);
  });

  it('any catalogue error about an item, on any route: the item before the message, once', async () => {
    const app = Fastify();
    installErrorHandler(app, false);
    app.get('/refused', async () => {
      throw new UserError('refused as asked').forItem(4).forItem(7);
    });
    app.get('/plain', async () => {
      throw new UserError('refused as asked');
    });
    try {
      expect((await app.inject({ method: 'GET', url: '/refused' })).json()).toEqual({ detail: 'item 4: refused as asked', error: 'UserError' });
      expect((await app.inject({ method: 'GET', url: '/plain' })).json()).toEqual({ detail: 'refused as asked', error: 'UserError' });
    } finally {
      await app.close();
    }
  });
});

describe('the import names the row from the error', () => {
  it('the third data row refused by the database: row 3, with the message as the write path wrote it', async () => {
    const message = (await refusal(badKey, [1, 2, 3])).message;
    for (const dry_run of [true, false]) {
      const res = await t.api('POST', '/api/import/ItemErrorProbe', { fields: ['name'], data: [['Name'], ['i1'], ['i2'], ['taken']], dry_run });
      expect(res.statusCode, res.body).toBe(200);
      const answer = res.json();
      expect(answer.details.errors, `dry_run ${dry_run}`).toEqual([{ row: 3, field: 'name', message }]);
      expect(answer.details.creates.map((c: { row: number }) => c.row)).toEqual([1, 2]);
    }
  });
});
