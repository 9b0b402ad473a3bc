/**
 * Every field type turns every JSON value a client can send into a value or a 400 that names the
 * field and what it expected (issue 10, item 7): tiny and huge numbers, -0, "NaN", objects,
 * lists, NUL, lone surrogates, 100 kB strings, `__proto__` keys, impossible dates, ids beyond
 * int32. Values are sent as raw JSON text, so `1e400`, `1e-400` and `-0` reach the server as a
 * client wrote them. What is accepted is read back from the database as stored.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureDatabase, rows } from '../support/orm.js';
import type { TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields']);
});
afterAll(async () => {
  await t?.close();
});

/** POST /api/create/OrmAllTypes with `name` and one more field given as raw JSON text. */
function create(field: string, rawValue: string) {
  return t.app.inject({
    method: 'POST', url: '/api/create/OrmAllTypes',
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
    payload: field === 'name' ? `{"name": ${rawValue}}` : `{"name": "input", "${field}": ${rawValue}}`,
  });
}

async function refused(field: string, rawValue: string, expected: string | RegExp): Promise<string> {
  const res = await create(field, rawValue);
  expect(res.statusCode, `${field} = ${rawValue.slice(0, 60)}: ${res.body.slice(0, 300)}`).toBe(400);
  const { detail, error } = res.json();
  expect(error).toBe('ValidationError');
  expect(detail).toContain(`for field '${field}' of OrmAllTypes: expected `);
  if (typeof expected === 'string') expect(detail).toContain(expected);
  else expect(detail).toMatch(expected);
  return detail;
}

/** The stored column of the record `POST /api/create` made, as PostgreSQL prints it. */
async function stored(field: string, rawValue: string): Promise<string | null> {
  const res = await create(field, rawValue);
  expect(res.statusCode, `${field} = ${rawValue.slice(0, 60)}: ${res.body.slice(0, 300)}`).toBe(200);
  const column = field === 'partner' || field === 'attachment' ? `${field}_id` : field;
  const [row] = await t.run(() => rows<{ v: string | null }>(sql`SELECT ${sql.ref(column)}::text AS v FROM orm_all_types WHERE id = ${res.json().id}`));
  return row!.v;
}

const NUMERIC = ['qty', 'ratio', 'raw_float', 'amount'];
const TEXTUAL = ['name', 'title', 'notes'];
/** Any JSON value that is not a number or a numeric string. */
const NOT_NUMBERS = ['"NaN"', '"Infinity"', 'true', 'false', '{}', '[]', '[1]', '{"__proto__": {"x": 1}}', '"12abc"', '""'];

describe('numbers', () => {
  it('a number beyond a double (1e400) is named for what it is, not "null", on every field', async () => {
    for (const field of [...NUMERIC, 'flag', 'day', 'moment', 'state', 'partner', 'attachment', 'blob', 'name', 'notes', 'payload']) {
      const detail = await refused(field, '1e400', '');
      expect(detail).toMatch(/^Invalid value Infinity \(a number beyond ±1\.8e308\) for field/);
      expect(detail).not.toContain('null');
      await refused(field, '-1e400', /^Invalid value -Infinity \(a number beyond ±1\.8e308\)/);
    }
  });

  it('-0 and 1e-400 are stored as 0, never as -0', async () => {
    for (const field of NUMERIC) {
      for (const raw of ['-0', '-0.0', '1e-400', '-1e-400']) expect(await stored(field, raw), `${field} ${raw}`).toBe('0');
    }
  });

  it('"NaN", booleans, objects and lists are refused by every numeric field, naming it', async () => {
    for (const field of NUMERIC) for (const raw of NOT_NUMBERS) await refused(field, raw, /expected (an integer|a number)/);
  });

  it('an Integer is refused beyond int32, a Float near the top of the range keeps its value', async () => {
    await refused('qty', '2147483648', 'expected an integer from -2147483647 to 2147483647');
    await refused('qty', '1.5', 'expected an integer');
    expect(await stored('qty', '2147483647')).toBe('2147483647');
    // Rounding to `precision: 2` used to overflow to Infinity and store it.
    expect(Number(await stored('ratio', '1.7976931348623157e308'))).toBe(1.7976931348623157e308);
    expect(Number(await stored('ratio', '-1e300'))).toBe(-1e300);
    expect(await stored('ratio', '1.005')).toBe('1.01');
  });

  it('a Monetary takes a decimal string that reads back as a number, and nothing longer', async () => {
    expect(await stored('amount', '"12.50"')).toBe('12.50');
    expect(await stored('amount', '"-0"')).toBe('0');
    for (const raw of ['"1e400"', '"1e5"', '" 12"', '"12,5"', `"${'9'.repeat(400)}"`, `"0.${'0'.repeat(20_000)}1"`]) {
      await refused('amount', raw, 'expected a number (or a decimal string like "12.50" of at most 64 characters)');
    }
  });
});

describe('text', () => {
  it('a lone surrogate is refused by Char, Text and Json, naming the field (PostgreSQL would store U+FFFD)', async () => {
    for (const field of TEXTUAL) {
      await refused(field, '"ab\\ud800"', 'expected text without a lone surrogate \\ud800 at UTF-16 offset 2 (half of a character)');
      await refused(field, '"\\udc00"', 'a lone surrogate \\udc00');
    }
    await refused('payload', '{"k": "\\ud800"}', 'expected JSON data without a lone surrogate \\ud800 at UTF-16 offset 0 (half of a character) in a text');
    await refused('payload', '{"\\ud800": 1}', 'in a key');
    // A whole surrogate pair is one character, stored as it is.
    expect(await stored('title', '"\\ud83d\\ude00"')).toBe('😀');
  });

  it('NUL is refused by the field itself, named, not by the database', async () => {
    for (const field of TEXTUAL) await refused(field, '"a\\u0000b"', 'expected text without the NUL character (\\u0000)');
    await refused('payload', '["a\\u0000b"]', 'expected JSON data without the NUL character (\\u0000) in a text');
  });

  it('100 kB: over a Char\'s max_length it is refused with the count, a Text stores it whole', async () => {
    const big = JSON.stringify('x'.repeat(100_000));
    await refused('title', big, 'expected at most 255 characters (got 100000)');
    await refused('code', big, 'expected at most 5 characters (got 100000)');
    expect((await stored('notes', big))!.length).toBe(100_000);
  });

  it('numbers and booleans become text; objects and lists are refused', async () => {
    expect(await stored('title', '-0')).toBe('0');
    expect(await stored('title', '12.5')).toBe('12.5');
    expect(await stored('title', 'true')).toBe('true');
    for (const raw of ['{}', '[]', '{"__proto__": 1}']) for (const field of TEXTUAL) await refused(field, raw, 'expected a string');
  });
});

describe('dates', () => {
  it('impossible dates, year 0 and years past 9999 are refused, naming the field', async () => {
    await refused('day', '"2024-02-30"', 'expected a real calendar date');
    await refused('day', '"2023-02-29"', 'expected a real calendar date');
    await refused('day', '"0000-01-01"', 'expected a date from 0001-01-01 to 9999-12-31');
    await refused('day', '"10000-01-01"', 'expected a date YYYY-MM-DD');
    await refused('day', '20240101', 'expected a date YYYY-MM-DD');
    expect(await stored('day', '"0001-01-01"')).toBe('0001-01-01');
    expect(await stored('day', '"0004-02-29"')).toBe('0004-02-29');
    expect(await stored('day', '"9999-12-31"')).toBe('9999-12-31');
  });

  it('a date-time whose instant leaves years 0001–9999 once its offset applies is refused', async () => {
    await refused('moment', '"0000-01-01T00:00:00Z"', 'expected a date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
    await refused('moment', '"0001-01-01T00:00:00+01:00"', 'expected a date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
    await refused('moment', '"9999-12-31T23:59:59-01:00"', 'expected a date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
    await refused('moment', '"2024-02-30T10:00:00Z"', 'expected a real calendar date and time');
    await refused('moment', '"2024-01-01T24:00:00Z"', 'expected a real calendar date and time');
    const res = await create('moment', '"2024-02-29T10:00:00.123456789+02:00"');
    expect(res.statusCode, res.body).toBe(200);
    const back = await t.api('POST', `/api/fetch/OrmAllTypes/${res.json().id}`, { fields: ['moment'] });
    expect(back.json().moment).toBe('2024-02-29T08:00:00.123Z');
  });
});

describe('links and structured values', () => {
  it('a ManyToOne or File id beyond int32, as text or as anything but a positive integer is refused, naming the field', async () => {
    for (const raw of ['2147483648', '9007199254740993', '"1"', '0', '-5', '1.5', 'true', '{"id": 2147483648}', '[1]']) {
      await refused('partner', raw, 'expected a OrmPartner id (an integer from 1 to 2147483647)');
      await refused('attachment', raw, 'expected an attachment id (an integer from 1 to 2147483647)');
    }
  });

  it('record ids of /api/execute beyond int32 are refused by the request, naming the key', async () => {
    const res = await t.api('POST', '/api/execute/Language/format_values', { ids: [1, 2147483648] });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'BadRequest', detail: "'ids' must be an array of record ids" });
  });

  it('Json keeps __proto__ as an ordinary key and refuses what JSON cannot hold', async () => {
    const res = await create('payload', '{"__proto__": {"polluted": true}, "deep": [[[[1]]]], "n": -0}');
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await t.run(() => rows<{ payload: unknown }>(sql`SELECT payload FROM orm_all_types WHERE id = ${res.json().id}`));
    expect(JSON.stringify(row!.payload)).toBe('{"n":0,"deep":[[[[1]]]],"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await refused('payload', '{"a": [1e400]}', 'expected JSON data without a number beyond ±1.8e308');
  });

  it('a body nested 3,000 levels deep is a 400 before any field sees it', async () => {
    const res = await create('payload', `${'['.repeat(3000)}1${']'.repeat(3000)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'BadRequest', detail: 'The request body is nested too deeply (more than 64 levels)' });
  });
});

describe('filters use the same conversions', () => {
  async function filterError(filter: string): Promise<{ detail: string; error: string }> {
    const res = await t.api('POST', '/api/query/OrmAllTypes', { filter_str: filter, fields: ['name'] });
    expect(res.statusCode, `${filter}: ${res.body.slice(0, 300)}`).toBe(400);
    return res.json();
  }

  it('an id beyond int32, a lone surrogate or NUL in a literal is a 400 naming the field and its position', async () => {
    expect(await filterError('Q(partner=2147483648)')).toMatchObject({
      error: 'QuerySyntaxError',
      detail: "Invalid value 2147483648 for field 'partner' of OrmAllTypes: expected a OrmPartner id (an integer up to 2147483647) (at position 2)",
    });
    expect((await filterError("Q(title='\\ud800')")).detail).toContain("for field 'title' of OrmAllTypes: expected text without a lone surrogate");
    expect((await filterError("Q(notes__icontains='a\\u0000')")).detail).toContain("for field 'notes' of OrmAllTypes: expected text without the NUL character");
    expect((await filterError("Q(state__in=['draft', 'a\\u0000'])")).detail).toContain("for field 'state' of OrmAllTypes: expected text without the NUL character");
    // Within range, any integer compares (and a negative one simply matches nothing).
    const res = await t.api('POST', '/api/query/OrmAllTypes', { filter_str: 'Q(partner__gt=-2147483647) | Q(partner=2147483647)', fields: ['name'] });
    expect(res.statusCode, res.body).toBe(200);
  });
});
