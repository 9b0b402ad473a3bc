/**
 * Every field type round-trips through create and read, validates what it is given, and has the
 * column type it declares; declaration parameters (required, default, precision, index,
 * currency_field, visible_setting, filter) do what they say and reach the registry.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { type TestDatabase } from '../support/test-database.js';
import { type Rec, fixtureDatabase, model, rows } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields']);
});
afterAll(async () => {
  await t?.close();
});

const AllTypes = () => model('OrmAllTypes');

/** Runs `fn` in its own unit of work and returns the error it throws. */

async function expectInvalid(vals: Record<string, unknown>, field: string): Promise<void> {
  const err = await t.failure(() => AllTypes().create({ name: 'invalid', ...vals }));
  expect(err).toBeInstanceOf(ValidationError);
  expect(err.message).toContain(`'${field}'`);
}

/** `{column: data_type}` of a table from information_schema. */
async function columnTypes(table: string): Promise<Record<string, { data_type: string; max: number | null }>> {
  const cols = await rows<{ column_name: string; data_type: string; character_maximum_length: number | null }>(sql`
    SELECT column_name, data_type, character_maximum_length FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name = ${table}`);
  return Object.fromEntries(cols.map((c) => [c.column_name, { data_type: c.data_type, max: c.character_maximum_length }]));
}

describe('Char', () => {
  it('round-trips a value, counting characters (not bytes) against max_length', async () => {
    await t.run(async () => {
      const rec = (await AllTypes().create({ name: 'char', code: 'héllo', title: 'x'.repeat(255) })) as Rec;
      const [back] = (await AllTypes().browse([rec.id])) as Rec[];
      expect(back!.code).toBe('héllo');
      expect(back!.title).toHaveLength(255);
    });
  });

  it('rejects a value longer than max_length with a ValidationError naming the field', async () => {
    await expectInvalid({ code: 'abcdef' }, 'code');
  });

  it('defaults max_length to 255: 256 characters are rejected and the column is varchar(255)', async () => {
    await expectInvalid({ title: 'y'.repeat(256) }, 'title');
    await t.run(async () => {
      const cols = await columnTypes('orm_all_types');
      expect(cols.title).toEqual({ data_type: 'character varying', max: 255 });
      expect(cols.code).toEqual({ data_type: 'character varying', max: 5 });
      expect(currentEnv().registry.meta('OrmAllTypes').fields.get('title')!.describe().max_length).toBe(255);
    });
  });

  it('rejects a value that is not a string', async () => {
    await expectInvalid({ title: { a: 1 } }, 'title');
  });
});

describe('Text', () => {
  it('round-trips long multi-line text into a text column', async () => {
    await t.run(async () => {
      const long = 'line\n'.repeat(5000) + 'end';
      const rec = (await AllTypes().create({ name: 'text', notes: long })) as Rec;
      expect(((await AllTypes().get(rec.id)) as Rec).notes).toBe(long);
      expect((await columnTypes('orm_all_types')).notes!.data_type).toBe('text');
    });
  });
});

describe('Boolean', () => {
  it('round-trips true, false and null', async () => {
    await t.run(async () => {
      const recs = (await AllTypes().create_many([
        { name: 'b1', flag: true }, { name: 'b2', flag: false }, { name: 'b3', flag: null },
      ])) as Rec[];
      const back = (await AllTypes().browse(recs.map((r) => r.id))) as Rec[];
      expect(back.map((r) => r.flag)).toEqual([true, false, null]);
    });
  });

  it('rejects a value that is not a boolean', async () => {
    await expectInvalid({ flag: 'yes' }, 'flag');
  });
});

describe('Integer', () => {
  it('round-trips integers, negative ones included', async () => {
    await t.run(async () => {
      const recs = (await AllTypes().create_many([{ name: 'i1', qty: 42 }, { name: 'i2', qty: -7 }, { name: 'i3', qty: 2_147_483_647 }])) as Rec[];
      expect(((await AllTypes().browse(recs.map((r) => r.id))) as Rec[]).map((r) => r.qty)).toEqual([42, -7, 2_147_483_647]);
    });
  });

  it('rejects a non-integer number, a numeric string and an out-of-range number', async () => {
    await expectInvalid({ qty: 1.5 }, 'qty');
    await expectInvalid({ qty: '3' }, 'qty');
    await expectInvalid({ qty: 2_147_483_648 }, 'qty');
  });
});

describe('Float', () => {
  it('rounds to the declared precision on write (2.675 → 2.68, 3.14159 → 3.14)', async () => {
    await t.run(async () => {
      const recs = (await AllTypes().create_many([{ name: 'f1', ratio: 2.675 }, { name: 'f2', ratio: 3.14159 }, { name: 'f3', ratio: -1.005 }])) as Rec[];
      const back = (await AllTypes().browse(recs.map((r) => r.id))) as Rec[];
      expect(back.map((r) => r.ratio)).toEqual([2.68, 3.14, -1.01]);
    });
  });

  it('keeps full double precision without a declared precision', async () => {
    await t.run(async () => {
      const rec = (await AllTypes().create({ name: 'f4', raw_float: 0.1 + 0.2 })) as Rec;
      expect(((await AllTypes().get(rec.id)) as Rec).raw_float).toBe(0.1 + 0.2);
      expect((await columnTypes('orm_all_types')).raw_float!.data_type).toBe('double precision');
    });
  });

  it('rejects NaN, Infinity and strings', async () => {
    await expectInvalid({ ratio: Number.NaN }, 'ratio');
    await expectInvalid({ ratio: Number.POSITIVE_INFINITY }, 'ratio');
    await expectInvalid({ ratio: '1.5' }, 'ratio');
  });
});

describe('Monetary', () => {
  it('is stored as numeric, so 0.1 + 0.2 summed in SQL is exactly 0.3', async () => {
    await t.run(async () => {
      await AllTypes().create_many([{ name: 'money', amount: 0.1 }, { name: 'money', amount: 0.2 }]);
      const { amount } = await AllTypes().query({ name: 'money' }).aggregate({ amount: 'sum' });
      expect(amount).toBe(0.3);
      const [sum] = await rows<{ s: string }>(sql`SELECT sum(amount)::text AS s FROM orm_all_types WHERE name = 'money'`);
      expect(sum!.s).toBe('0.3');
      expect((await columnTypes('orm_all_types')).amount!.data_type).toBe('numeric');
    });
  });

  it('round-trips amounts as numbers and accepts decimal strings', async () => {
    await t.run(async () => {
      const recs = (await AllTypes().create_many([{ name: 'm1', amount: 1234.56 }, { name: 'm2', amount: '12.50' }, { name: 'm3', amount: -0.01 }])) as Rec[];
      expect(((await AllTypes().browse(recs.map((r) => r.id))) as Rec[]).map((r) => r.amount)).toEqual([1234.56, 12.5, -0.01]);
      const stored = await rows<{ a: string }>(sql`SELECT amount::text AS a FROM orm_all_types WHERE id = ${recs[0]!.id}`);
      expect(stored[0]!.a).toBe('1234.56');
    });
  });

  it('rejects a value that is not a number', async () => {
    await expectInvalid({ amount: 'ten' }, 'amount');
    await expectInvalid({ amount: Number.NaN }, 'amount');
  });
});

describe('Date', () => {
  it('round-trips a YYYY-MM-DD string without a time-zone shift, whatever the process time zone', async () => {
    const tz = process.env.TZ;
    process.env.TZ = 'America/Los_Angeles';
    try {
      await t.run(async () => {
        const rec = (await AllTypes().create({ name: 'date', day: '2024-02-29' })) as Rec;
        expect(((await AllTypes().get(rec.id)) as Rec).day).toBe('2024-02-29');
        const [stored] = await rows<{ d: string }>(sql`SELECT day::text AS d FROM orm_all_types WHERE id = ${rec.id}`);
        expect(stored!.d).toBe('2024-02-29');
        expect(await AllTypes().query({ day: '2024-02-29' }).ids()).toContain(rec.id);
        const [read] = await AllTypes().query({ id: rec.id }).read(['day']);
        expect(read!.day).toBe('2024-02-29');
      });
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('rejects impossible dates and other formats', async () => {
    await expectInvalid({ day: '2023-02-29' }, 'day');
    await expectInvalid({ day: '2024-13-01' }, 'day');
    await expectInvalid({ day: '2024-04-31' }, 'day');
    await expectInvalid({ day: '29/02/2024' }, 'day');
    await expectInvalid({ day: 20240229 }, 'day');
  });

  it('has a date column', async () => {
    await t.run(async () => expect((await columnTypes('orm_all_types')).day!.data_type).toBe('date'));
  });
});

describe('Datetime', () => {
  it('reads back ISO 8601 in UTC, converting offsets and accepting Date objects', async () => {
    await t.run(async () => {
      const recs = (await AllTypes().create_many([
        { name: 'dt1', moment: '2024-05-06T07:08:09Z' },
        { name: 'dt2', moment: '2024-05-06T09:08:09+02:00' },
        { name: 'dt3', moment: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)) },
      ])) as Rec[];
      const back = (await AllTypes().browse(recs.map((r) => r.id))) as Rec[];
      expect(back.map((r) => r.moment)).toEqual(['2024-05-06T07:08:09.000Z', '2024-05-06T07:08:09.000Z', '2024-01-02T03:04:05.678Z']);
      expect((await columnTypes('orm_all_types')).moment!.data_type).toBe('timestamp with time zone');
    });
  });

  it('reads a date-time without an offset as UTC, not as the server’s local time', async () => {
    const tz = process.env.TZ;
    process.env.TZ = 'Asia/Tokyo';
    try {
      await t.run(async () => {
        const recs = (await AllTypes().create_many([
          { name: 'dt4', moment: '2024-05-06T07:08:09' }, { name: 'dt5', moment: '2024-05-06 07:08' },
        ])) as Rec[];
        const back = (await AllTypes().browse(recs.map((r) => r.id))) as Rec[];
        expect(back.map((r) => r.moment)).toEqual(['2024-05-06T07:08:09.000Z', '2024-05-06T07:08:00.000Z']);
      });
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('rejects text that is not a date-time and impossible calendar dates', async () => {
    await expectInvalid({ moment: 'yesterday' }, 'moment');
    await expectInvalid({ moment: '2024-02-30T10:00:00Z' }, 'moment');
    await expectInvalid({ moment: '2024-05-06T25:00:00Z' }, 'moment');
  });
});

describe('Selection', () => {
  it('stores one of its choices and applies its default', async () => {
    await t.run(async () => {
      const [a, b] = (await AllTypes().create_many([{ name: 's1', state: 'done', level: 'high' }, { name: 's2' }])) as Rec[];
      expect([a!.state, a!.level]).toEqual(['done', 'high']);
      expect([b!.state, b!.level]).toEqual(['draft', null]);
    });
  });

  it('rejects a value that is not a choice', async () => {
    await expectInvalid({ state: 'archived' }, 'state');
    await expectInvalid({ level: 'Low' }, 'level');
  });

  it('lists its choices as [value, label] pairs in the registry', async () => {
    await t.run(async () => {
      const fields = currentEnv().registry.meta('OrmAllTypes').fields;
      expect(fields.get('state')!.describe().choices).toEqual([['draft', 'Draft'], ['done', 'Done']]);
      expect(fields.get('level')!.describe().choices).toEqual([['low', 'low'], ['high', 'high']]);
      expect(fields.get('state')!.describe().default).toBe('draft');
    });
  });
});

describe('ManyToOne', () => {
  it('stores the target id, reads the target record and accepts {id} objects', async () => {
    await t.run(async () => {
      const partner = await model('OrmPartner').create({ name: 'Partner A' });
      const [a, b] = (await AllTypes().create_many([{ name: 'm2o1', partner: partner.id }, { name: 'm2o2', partner: { id: partner.id } }])) as Rec[];
      expect(a!._values.partner).toBe(partner.id);
      const target = (await a!.partner) as Rec;
      expect(target.id).toBe(partner.id);
      expect(target.name).toBe('Partner A');
      expect(((await b!.partner) as Rec).id).toBe(partner.id);
      const [read] = await AllTypes().query({ id: a!.id }).read(['partner.name', 'partner.rank']);
      expect(read!.partner).toEqual({ id: partner.id, display_name: 'Partner A', name: 'Partner A', rank: 0 });
      await a!.write({ partner: null });
      expect(await a!.partner).toBeNull();
    });
  });

  it('rejects an id that does not exist with a ValidationError naming the field', async () => {
    const err = await t.failure(() => AllTypes().create({ name: 'dangling', partner: 999_999 }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'partner'");
  });

  it('rejects a value that is not an id', async () => {
    await expectInvalid({ partner: 'Partner A' }, 'partner');
    await expectInvalid({ partner: 1.5 }, 'partner');
  });
});

describe('OneToMany', () => {
  it('reads the records pointing back, through related_name and an explicit declaration', async () => {
    await t.run(async () => {
      const partner = (await model('OrmPartner').create({ name: 'O2M partner' })) as Rec;
      await AllTypes().create_many([{ name: 'o2m-b', partner: partner.id }, { name: 'o2m-a', partner: partner.id }, { name: 'o2m-x' }]);
      const viaReverse = (await partner.all_types) as Rec[];
      const viaExplicit = (await partner.items) as Rec[];
      // Lines come in the target's default order (name ASC).
      expect(viaReverse.map((r) => r.name)).toEqual(['o2m-a', 'o2m-b']);
      expect(viaExplicit.map((r) => r.name)).toEqual(['o2m-a', 'o2m-b']);
    });
  });

  it('creates lines given as objects and, on write, unlinks the lines left out', async () => {
    await t.run(async () => {
      const partner = (await model('OrmPartner').create({ name: 'Lines', items: [{ name: 'line 1' }, { name: 'line 2' }] })) as Rec;
      const lines = (await partner.items) as Rec[];
      expect(lines.map((l) => l.name)).toEqual(['line 1', 'line 2']);
      await partner.write({ items: [lines[1]!.id, { name: 'line 3' }] });
      const after = (await partner.items) as Rec[];
      expect(after.map((l) => l.name)).toEqual(['line 2', 'line 3']);
      // The partner ManyToOne is optional (SET NULL): the dropped line survives without a partner.
      const dropped = (await AllTypes().get(lines[0]!.id)) as Rec;
      expect(dropped._values.partner).toBeNull();
    });
  });
});

describe('ManyToMany', () => {
  it('stores links, reads them in the target order and writes replace the whole set', async () => {
    await t.run(async () => {
      const [a, b, c] = await model('OrmTag').create_many([{ name: 'm2m-a' }, { name: 'm2m-b' }, { name: 'm2m-c' }]);
      const rec = (await AllTypes().create({ name: 'm2m', tags: [b!.id, a!.id] })) as Rec;
      expect(((await rec.tags) as Rec[]).map((x) => x.name)).toEqual(['m2m-a', 'm2m-b']);
      await rec.write({ tags: [b!.id, c!.id] });
      expect(((await rec.tags) as Rec[]).map((x) => x.name)).toEqual(['m2m-b', 'm2m-c']);
      // The reverse side (related_name) sees the same links.
      expect(((await ((await model('OrmTag').get(c!.id)) as Rec).all_types) as Rec[]).map((x) => x.id)).toEqual([rec.id]);
      expect(((await ((await model('OrmTag').get(a!.id)) as Rec).all_types) as Rec[])).toEqual([]);
      await rec.write({ tags: [] });
      expect(await rec.tags).toEqual([]);
      const [links] = await rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM orm_all_types_tags_rel WHERE orm_all_types_id = ${rec.id}`);
      expect(links!.n).toBe(0);
    });
  });

  it('rejects a link to a record that does not exist', async () => {
    const err = await t.failure(() => AllTypes().create({ name: 'bad link', tags: [999_999] }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'tags'");
  });
});

describe('File', () => {
  it('stores an attachment id in an integer <name>_id column', async () => {
    await t.run(async () => {
      const attachmentId = await (model('Attachment') as any).create_from_file(Buffer.from('hello').toString('base64'), 'hello.txt');
      const rec = (await AllTypes().create({ name: 'file', attachment: attachmentId })) as Rec;
      expect(((await AllTypes().get(rec.id)) as Rec).attachment).toBe(attachmentId);
      const cols = await columnTypes('orm_all_types');
      expect(cols.attachment_id!.data_type).toBe('integer');
      expect(cols.attachment).toBeUndefined();
      const [read] = await AllTypes().query({ id: rec.id }).read(['attachment']);
      expect(read!.attachment).toBe(attachmentId);
    });
  });

  it('rejects a value that is not an attachment id', async () => {
    await expectInvalid({ attachment: 'file.pdf' }, 'attachment');
    await expectInvalid({ attachment: -3 }, 'attachment');
  });
});

describe('Binary', () => {
  it('takes base64 in, stores the bytes in a bytea column and gives base64 out', async () => {
    await t.run(async () => {
      const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
      const rec = (await AllTypes().create({ name: 'binary', blob: bytes.toString('base64') })) as Rec;
      expect(((await AllTypes().get(rec.id)) as Rec).blob).toBe(bytes.toString('base64'));
      const [stored] = await rows<{ hex: string }>(sql`SELECT encode(blob, 'hex') AS hex FROM orm_all_types WHERE id = ${rec.id}`);
      expect(stored!.hex).toBe('000102fdfeff');
      expect((await columnTypes('orm_all_types')).blob!.data_type).toBe('bytea');
      const [read] = await AllTypes().query({ id: rec.id }).read(['blob']);
      expect(read!.blob).toBe('AAEC/f7/');
    });
  });

  it('rejects text that is not base64', async () => {
    await expectInvalid({ blob: 'not base64!' }, 'blob');
  });
});

describe('Json', () => {
  it('round-trips objects, arrays and strings through a jsonb column', async () => {
    await t.run(async () => {
      const payload = { a: [1, { b: null, c: 'ü' }], d: true };
      const recs = (await AllTypes().create_many([{ name: 'j1', payload }, { name: 'j2', payload: [1, 2] }, { name: 'j3', payload: 'text' }])) as Rec[];
      const back = (await AllTypes().browse(recs.map((r) => r.id))) as Rec[];
      expect(back.map((r) => r.payload)).toEqual([payload, [1, 2], 'text']);
      expect((await columnTypes('orm_all_types')).payload!.data_type).toBe('jsonb');
    });
  });
});

describe('declaration parameters', () => {
  it('required: a missing or empty value is a ValidationError naming the field, on create and on write', async () => {
    let err = await t.failure(() => AllTypes().create({ code: 'x' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'name'");
    err = await t.failure(() => AllTypes().create({ name: '' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'name'");
    err = await t.failure(async () => {
      const rec = await AllTypes().create({ name: 'required' });
      await rec.write({ name: null });
    });
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'name'");
  });

  it('required: the column is NOT NULL and the registry says required', async () => {
    await t.run(async () => {
      const [col] = await rows<{ is_nullable: string }>(sql`SELECT is_nullable FROM information_schema.columns
        WHERE table_name = 'orm_all_types' AND column_name = 'name'`);
      expect(col!.is_nullable).toBe('NO');
      expect(currentEnv().registry.meta('OrmAllTypes').fields.get('name')!.describe().required).toBe(true);
    });
  });

  it('default: a value is used when the create does not name the field, not when it does', async () => {
    await t.run(async () => {
      const [a, b] = (await AllTypes().create_many([{ name: 'd1' }, { name: 'd2', currency_code: 'USD' }])) as Rec[];
      expect(a!.currency_code).toBe('EUR');
      expect(b!.currency_code).toBe('USD');
      expect(currentEnv().registry.meta('OrmAllTypes').fields.get('currency_code')!.describe().default).toBe('EUR');
    });
  });

  it('default: a function is called once per created record', async () => {
    await t.run(async () => {
      const recs = (await AllTypes().create_many([{ name: 'd3' }, { name: 'd4' }, { name: 'd5' }])) as Rec[];
      const serials = recs.map((r) => r.serial as string);
      expect(new Set(serials).size).toBe(3);
      for (const s of serials) expect(s).toMatch(/^S\d+$/);
      const another = (await AllTypes().create({ name: 'd6' })) as Rec;
      expect(serials).not.toContain(another.serial);
    });
  });

  it('index: an index on the column exists in pg_indexes', async () => {
    await t.run(async () => {
      const indexes = await rows<{ indexdef: string }>(sql`SELECT indexdef FROM pg_indexes WHERE tablename = 'orm_all_types'`);
      expect(indexes.some((i) => /\(day\)/.test(i.indexdef))).toBe(true);
      expect(indexes.some((i) => /\(notes\)/.test(i.indexdef))).toBe(false);
      expect(currentEnv().registry.meta('OrmAllTypes').fields.get('day')!.describe().index).toBe(true);
    });
  });

  it('identifier: unique among the records that have one, an index without the empty ones that a lookup uses', async () => {
    await t.run(async () => {
      const [def] = await rows<{ indexdef: string }>(sql`SELECT indexdef FROM pg_indexes WHERE indexname = 'orm_all_types_identifier_uniq'`);
      expect(def!.indexdef).toMatch(/UNIQUE INDEX .*\(identifier\) WHERE \(identifier IS NOT NULL\)/);
      await AllTypes().create_many([{ name: 'no id 1' }, { name: 'no id 2' }]);
      await AllTypes().create({ name: 'with id', identifier: 'orm.partial_identifier' });
      await expect(AllTypes().create({ name: 'again', identifier: 'orm.partial_identifier' })).rejects.toThrow();
    });
    await t.run(async () => {
      await rows(sql`SET LOCAL enable_seqscan = off`);
      const plan = await rows<{ 'QUERY PLAN': string }>(sql`EXPLAIN SELECT id FROM orm_all_types WHERE identifier = ${'orm.partial_identifier'}`);
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/orm_all_types_identifier_uniq/);
    });
  });

  it('currency_field, visible_setting, filter and precision appear in the field description', async () => {
    await t.run(async () => {
      const fields = currentEnv().registry.meta('OrmAllTypes').fields;
      expect(fields.get('amount')!.describe()).toMatchObject({ type: 'Monetary', currency_field: 'currency_code' });
      expect(fields.get('secret_note')!.describe()).toMatchObject({ visible_setting: 'Q(orm_show_secret=True)', description: 'Shown when the setting is on' });
      expect(fields.get('partner')!.describe()).toMatchObject({
        type: 'ManyToOne', related_model: 'OrmPartner', related_name: 'all_types', filter: 'Q(rank__gte=0)', on_delete: 'SET NULL',
      });
      expect(fields.get('ratio')!.describe().precision).toBe(2);
    });
  });

  it('GET /api/get_registry/<model> describes every field', async () => {
    const res = await t.api('GET', '/api/get_registry/OrmAllTypes');
    expect(res.statusCode, res.body).toBe(200);
    const reg = res.json();
    expect(reg.amount).toMatchObject({ type: 'Monetary', currency_field: 'currency_code' });
    expect(reg.secret_note.visible_setting).toBe('Q(orm_show_secret=True)');
    expect(reg.partner).toMatchObject({ type: 'ManyToOne', related_model: 'OrmPartner', filter: 'Q(rank__gte=0)' });
    expect(reg.state.choices).toEqual([['draft', 'Draft'], ['done', 'Done']]);
    expect(reg.code.max_length).toBe(5);
    expect(reg.title.max_length).toBe(255);
    expect(reg.name.required).toBe(true);
    expect(reg.tags).toMatchObject({ type: 'ManyToMany', related_model: 'OrmTag', related_name: 'all_types' });
    expect(reg.attachment).toMatchObject({ type: 'File' });
    expect(reg.blob.type).toBe('Binary');
    expect(reg.payload.type).toBe('Json');
    expect(Object.keys(reg).slice(0, 7)).toEqual(['id', 'identifier', 'display_name', 'created_date', 'created_by', 'updated_date', 'updated_by']);
  });

  it('the API takes and returns every field type in its wire form', async () => {
    const partner = await t.api('POST', '/api/create/OrmPartner', { name: 'API partner' });
    const body = {
      name: 'api', code: 'abc', flag: true, qty: 3, ratio: 1.234, amount: 9.99, day: '2024-01-31',
      moment: '2024-01-31T23:30:00+01:00', state: 'done', partner: partner.json().id, blob: 'aGVsbG8=', payload: { k: [1] },
    };
    const created = await t.api('POST', '/api/create/OrmAllTypes', body);
    expect(created.statusCode, created.body).toBe(200);
    const res = await t.api('POST', `/api/fetch/OrmAllTypes/${created.json().id}`, { fields: [...Object.keys(body), 'currency_code'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'api', code: 'abc', flag: true, qty: 3, ratio: 1.23, amount: 9.99, day: '2024-01-31',
      moment: '2024-01-31T22:30:00.000Z', state: 'done', partner: { id: partner.json().id, display_name: 'API partner' },
      blob: 'aGVsbG8=', payload: { k: [1] }, currency_code: 'EUR',
    });
    const bad = await t.api('POST', '/api/create/OrmAllTypes', { name: 'api', code: 'too long' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('ValidationError');
  });
});
