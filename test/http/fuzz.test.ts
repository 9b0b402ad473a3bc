/**
 * Property-based fuzzing of the generic API (issue 10, item 7): thousands of generated filters,
 * field paths and write bodies — plausible ones that reach deep into the ORM and hostile ones
 * (tiny and huge numbers, -0, NaN as text, lone surrogates, NUL, 100 kB strings, `__proto__`
 * keys, 3,000-deep nesting, impossible dates, ids beyond int32) — against query, name_search,
 * fetch, create, update, delete and execute. Every answer must be below 500 and every 4xx a
 * `{detail, error}` body; a refused write must leave the data exactly as it was (a checksum of
 * every table the fuzzed models write, taken before and after each write), and the reads none.
 *
 * Deterministic: the cases come from a fixed seed. A failure prints the seed, the fast-check path
 * and the request; `FF_FUZZ_SEED=<seed> npx vitest run test/http/fuzz.test.ts` replays the same
 * run. `FF_FUZZ_RUNS=<factor>` scales the number of cases (1 = the default counts below).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { currentEnv } from '../../src/orm/env.js';
import type { Field } from '../../src/orm/fields/field.js';
import { ManyToManyField, RelationalField } from '../../src/orm/fields/relational-fields.js';
import { SelectionField } from '../../src/orm/fields/scalar-fields.js';
import { LOOKUPS, VARIABLES } from '../../src/orm/query/filter-ast.js';
import { fixtureDatabase, rows } from '../support/orm.js';
import type { TestDatabase } from '../support/test-database.js';

const SEED = Number(process.env.FF_FUZZ_SEED ?? 20261124);
const SCALE = Number(process.env.FF_FUZZ_RUNS ?? 1);
/** Cases per run, tuned to keep this file under about a minute on the 2-core machine. */
const FILTER_RUNS = Math.round(6000 * SCALE);
const WRITE_RUNS = Math.round(3000 * SCALE);

/** Models whose records the fuzzer writes, and the ones it only reads. */
const WRITTEN = ['ProjectTask', 'Contact', 'Attachment', 'OrmAllTypes', 'ProjectTag', 'ProjectProject'] as const;
const READ = [...WRITTEN, 'CountryState', 'User', 'ProjectStage', 'OrmPartner'] as const;

interface FieldInfo {
  name: string;
  type: string;
  target: string | null;
  choices: string[];
  required: boolean;
}

let t: TestDatabase;
let tmp: string;
/** Keys the requests are sent with: the administrator's and a plain user's (403s, hidden rows). */
const keys: string[] = [];
const models = new Map<string, FieldInfo[]>();
/** Tables a write to the fuzzed models can touch (their own and their link tables). */
let tables: string[] = [];
const existingIds = new Map<string, number[]>();

beforeAll(async () => {
  t = await fixtureDatabase('full', ['orm_fields']);
  tmp = await mkdtemp(join(tmpdir(), 'ff-fuzz-'));
  t.platform.files.configure({ store: new LocalFileStore(join(tmp, 'files')), uploadLimit: 1 << 20 });
  keys.push(t.apiKey);
  await t.run(async () => {
    const { registry } = currentEnv();
    const seeds: Record<string, Record<string, unknown>[]> = {
      ProjectTag: [{ name: 'red' }, { name: 'blue' }],
      Contact: [{ name: 'Acme', is_company: true }, { name: 'Ann', email: 'ann@example.com' }, { name: 'Bob' }],
      ProjectProject: [{ name: 'Alpha' }, { name: 'Beta' }],
      OrmPartner: [{ name: 'P1', rank: 1 }, { name: 'P2', rank: 2 }],
      ProjectTask: [{ name: 'first' }, { name: 'second', deadline: '2024-02-29' }, { name: "O'Brien" }],
      OrmAllTypes: [{ name: 'all one', qty: 1, day: '2024-01-31' }, { name: 'all two', amount: 12.5 }],
    };
    for (const [name, vals] of Object.entries(seeds)) await registry.meta(name).cls.create_many(vals);
    // Not the removal queue of stored bytes: the sweep empties it by itself after a delete commits.
    const tableSet = new Set<string>();
    for (const name of READ) {
      const meta = registry.meta(name);
      models.set(name, [...meta.fields.values()].filter((f) => !f.options.internal).map(info));
      existingIds.set(name, (await meta.cls.query().with_archived().limit(20).ids()));
    }
    for (const name of [...WRITTEN, 'ProjectStage', 'OrmPartner']) {
      const meta = registry.meta(name);
      tableSet.add(meta.table);
      for (const f of meta.fields.values()) if (f instanceof ManyToManyField) tableSet.add(f.join.table);
    }
    tables = [...tableSet].sort();
    keys.push((await createServiceAccountKey({ name: 'fuzz user', groups: ['core.group_user', 'project.group_project_user'] })).key);
  });
  const attachment = await api(keys[0]!, 'POST', '/api/create/Attachment', JSON.stringify({
    name: 'seed.txt', base64: Buffer.from('seed').toString('base64'), model: 'ProjectTask', record: existingIds.get('ProjectTask')![0],
  }));
  expect(attachment.statusCode, attachment.body).toBe(200);
  existingIds.set('Attachment', [attachment.json().id]);
});
afterAll(async () => {
  await t?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function info(f: Field): FieldInfo {
  return {
    name: f.name,
    type: f.type,
    target: f instanceof RelationalField ? f.targetName : f.type === 'File' ? 'Attachment' : null,
    choices: f instanceof SelectionField ? f.choices.map(([v]) => v) : [],
    required: f.isRequired,
  };
}

function api(key: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method, url, payload,
    headers: { authorization: `Bearer ${key}`, 'x-db-name': t.name, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
  });
}

/** md5 over every row of every table a fuzzed write can touch (sorted, so row order is irrelevant). */
async function checksum(): Promise<string> {
  return t.run(async () => {
    const parts = tables.map((table) => sql`SELECT ${table} || ':' || x::text AS r FROM ${sql.table(table)} AS x`);
    const [row] = await rows<{ sum: string }>(sql`SELECT md5(string_agg(r, '|' ORDER BY r)) AS sum FROM (${sql.join(parts, sql` UNION ALL `)}) AS all_rows`);
    return row!.sum;
  });
}

interface Request {
  key: number;
  method: 'POST' | 'PUT' | 'DELETE';
  url: string;
  payload?: string;
}

function describeRequest(r: Request): string {
  const body = r.payload === undefined ? '' : ` ${r.payload.length > 600 ? `${r.payload.slice(0, 600)}… (${r.payload.length} characters)` : r.payload}`;
  return `${r.method} ${r.url} as ${r.key === 0 ? 'administrator' : 'user'}${body}`;
}

/** Sends `r` and checks the answer's shape; returns the status. */
async function send(r: Request): Promise<number> {
  const res = await api(keys[r.key]!, r.method, r.url, r.payload);
  if (res.statusCode >= 500) throw new Error(`${res.statusCode} for ${describeRequest(r)}\n→ ${res.body.slice(0, 2000)}`);
  if (res.statusCode >= 400) {
    let body: unknown;
    try {
      body = res.json();
    } catch {
      throw new Error(`${res.statusCode} without a JSON body for ${describeRequest(r)}\n→ ${res.body.slice(0, 500)}`);
    }
    const { detail, error } = body as { detail?: unknown; error?: unknown };
    if (typeof detail !== 'string' || !detail || typeof error !== 'string' || !error) {
      throw new Error(`${res.statusCode} without {detail, error} for ${describeRequest(r)}\n→ ${res.body.slice(0, 500)}`);
    }
  }
  return res.statusCode;
}

// ---------------------------------------------------------------------------------------------
// JSON values, as request text: what JSON can say but JavaScript cannot write back (1e400, -0,
// 1e-400, lone surrogates escaped), built as text so every case reaches the server as generated.
// ---------------------------------------------------------------------------------------------

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const hostileChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: loneSurrogate },
  { weight: 2, arbitrary: fc.constantFrom('\u0000', "'", '"', '\\', '%', '_', '\n', '😀', 'é', '\u202e', '\ufeff') },
);
const text = fc.oneof(
  { weight: 5, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 4, arbitrary: fc.string({ unit: hostileChar, maxLength: 12 }) },
  { weight: 4, arbitrary: fc.constantFrom(
    '', ' ', 'NaN', 'Infinity', '-0', '1e400', '1', '-1', '0', '12.50', '1e5', 'true', 'null', 'draft', 'done', 'low', '2',
    '2024-02-29', '2023-02-29', '2024-02-30', '0000-01-01', '0001-01-01', '9999-12-31', '10000-01-01', '2024-13-01',
    '2024-01-01T00:00:00Z', '2024-01-01T24:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00',
    '2024-01-01T00:00:00.123456789Z', '2024-01-01 10:00', 'ProjectTask', 'Contact', 'Attachment', 'OrmAllTypes', 'CountryState',
    '__proto__', 'constructor', 'prototype', 'toString', 'aGVsbG8=', '%', '_', "O'Brien", 'a\u0000b', '\ud800', 'x\udc00y',
  ) },
  { weight: 1, arbitrary: fc.integer({ min: 240, max: 1100 }).map((n) => 'é'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom(100_000, 20_000).map((n) => 'x'.repeat(n)) },
);
const numberText = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -3, max: 40 }).map(String) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? '-0' : String(n))) },
  { weight: 3, arbitrary: fc.constantFrom(
    '1e400', '-1e400', '1e-400', '-1e-400', '-0', '-0.0', '0.0', '1E308', '1.7976931348623157e308', '5e-324',
    '9007199254740993', '2147483647', '2147483648', '-2147483648', '-2147483649', '4294967296', '1e15', '0.1', '1.005',
    '123456789012345678901234567890', '1.5', '99999999999',
  ) },
);
const deepText = fc.integer({ min: 10, max: 3000 }).chain((depth) =>
  fc.constantFrom(`${'['.repeat(depth)}1${']'.repeat(depth)}`, `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));
const keyText = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'name', 'model', 'record', 'base64') },
);

/** Any JSON value as text, nested a few levels. */
const { json } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    { weight: 4, arbitrary: text.map((s) => JSON.stringify(s)) },
    { weight: 4, arbitrary: numberText },
    { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'null') },
    { weight: 2, arbitrary: fc.array(tie('json'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`) },
    { weight: 2, arbitrary: fc.array(fc.tuple(keyText, tie('json')), { maxLength: 4 }).map(objectText) },
  ),
}));

/** Any JSON value, or now and then one nested up to 3,000 levels deep. */
const anyJson = fc.oneof({ weight: 30, arbitrary: json }, { weight: 1, arbitrary: deepText });

function objectText(entries: readonly (readonly [string, string])[]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

// ---------------------------------------------------------------------------------------------
// Write bodies: per field, a plausible value (so writes also succeed and reach lines, links,
// setters and recomputes) or any JSON value.
// ---------------------------------------------------------------------------------------------

function idOf(model: string | null): fc.Arbitrary<string> {
  const ids = existingIds.get(model ?? '') ?? [];
  return fc.oneof(
    { weight: 3, arbitrary: ids.length ? fc.constantFrom(...ids).map(String) : fc.constant('1') },
    { weight: 1, arbitrary: numberText },
  );
}

function plausible(f: FieldInfo, depth: number): fc.Arbitrary<string> {
  switch (f.type) {
    case 'Char': case 'Text': return fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s));
    case 'Boolean': return fc.constantFrom('true', 'false');
    case 'Integer': return fc.integer({ min: -1000, max: 1000 }).map(String);
    case 'Float': case 'Monetary': return fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }).map(String), fc.constantFrom('"12.50"', '0.1'));
    case 'Date': return fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString().slice(0, 10)));
    case 'Datetime': return fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString()));
    case 'Selection': return fc.constantFrom(...f.choices, '').map((s) => JSON.stringify(s));
    case 'ManyToOne': return fc.oneof(idOf(f.target), fc.constant('null'));
    case 'ManyToMany': return fc.array(idOf(f.target), { maxLength: 3 }).map((ids) => `[${ids.join(',')}]`);
    case 'OneToMany': {
      const lines = depth > 0 ? idOf(f.target) : fc.oneof(idOf(f.target), bodyOf(f.target!, depth + 1));
      return fc.array(lines, { maxLength: 3 }).map((items) => `[${items.join(',')}]`);
    }
    case 'File': return fc.oneof(
      idOf('Attachment'),
      fc.record({ name: fc.constantFrom('a.txt', 'x', ''), base64: fc.constantFrom('aGVsbG8=', '', '!!', 'a') }).map((o) => JSON.stringify(o)),
    );
    default: return json;
  }
}

/** A create or update body for `model`: a few fields, each plausible or anything. */
function bodyOf(model: string, depth = 0): fc.Arbitrary<string> {
  const fieldInfos = models.get(model) ?? [];
  const entry = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...fieldInfos).chain((f) => fc.tuple(
      fc.constant(f.name), fc.oneof({ weight: 3, arbitrary: plausible(f, depth) }, { weight: 2, arbitrary: anyJson }),
    )) },
    { weight: 1, arbitrary: fc.tuple(keyText, json) },
  );
  const required = fieldInfos.filter((f) => f.required && f.type === 'Char');
  return fc.tuple(fc.array(entry, { maxLength: 5 }), fc.boolean()).map(([entries, withRequired]) => objectText([
    ...(withRequired ? required.map((f) => [f.name, JSON.stringify(`${f.name} value`)] as const) : []),
    ...entries,
  ]));
}

const pathId = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 40 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0', '-1', '99999999999', '2147483648', 'abc', '1e3', '1.5', '%00', '%F0%9F%98%80', '00012', ' 1') },
);

/** Built once the test database is known: plausible ids and paths come from it. */
const writeRequests = (): fc.Arbitrary<Request> => fc.constantFrom(...WRITTEN).chain((model) => {
  // The administrator more often than the user, so that writes also succeed and go deep.
  const key = fc.constantFrom(0, 0, 0, 1);
  const body = fc.oneof({ weight: 12, arbitrary: bodyOf(model) }, { weight: 1, arbitrary: anyJson });
  const recordId = fc.oneof({ weight: 4, arbitrary: idOf(model) }, { weight: 1, arbitrary: pathId });
  const methods = { ProjectTask: ['action_close'], Attachment: ['create_from_file', 'remove_from_attachment'] } as Record<string, string[]>;
  const method = fc.oneof(
    { weight: methods[model] ? 6 : 0, arbitrary: fc.constantFrom(...(methods[model] ?? ['x'])) },
    { weight: 1, arbitrary: fc.constantFrom('write', 'unlink', '__proto__', 'constructor', 'toString', 'create_from_file') },
  );
  // Named inputs of the attachment methods, plausible or anything.
  const attachmentInputs = fc.array(fc.oneof(
    fc.tuple(fc.constant('file_content'), fc.oneof(fc.constantFrom('"aGVsbG8="', '""', '"@@"'), json)),
    fc.tuple(fc.constant('filename'), fc.oneof(fc.constantFrom('"a.txt"', '""'), json)),
    fc.tuple(fc.constant('model'), fc.oneof(fc.constantFrom(...WRITTEN, 'Attachment', 'Nope').map((m) => JSON.stringify(m)), json)),
    fc.tuple(fc.constant('record'), fc.oneof(idOf('ProjectTask'), json)),
    fc.tuple(fc.constant('field'), fc.oneof(fc.constantFrom('"doc"', '"attachment"'), json)),
    fc.tuple(fc.constant('is_public'), fc.constantFrom('true', 'false', '1')),
  ), { maxLength: 6 }).map(objectText);
  const inputs = model === 'Attachment' ? fc.oneof({ weight: 3, arbitrary: attachmentInputs }, { weight: 1, arbitrary: json }) : json;
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ key, body }).map((r): Request => ({ key: r.key, method: 'POST', url: `/api/create/${model}`, payload: r.body })) },
    { weight: 4, arbitrary: fc.record({ key, id: recordId, body })
      .map((r): Request => ({ key: r.key, method: 'PUT', url: `/api/update/${model}/${r.id}`, payload: r.body })) },
    { weight: 1, arbitrary: fc.record({ key, id: recordId }).map((r): Request => ({ key: r.key, method: 'DELETE', url: `/api/delete/${model}/${r.id}` })) },
    { weight: 2, arbitrary: fc.record({
      key,
      method,
      ids: rarely(fc.oneof({ weight: 4, arbitrary: fc.array(idOf(model), { maxLength: 3 }).map((ids) => `[${ids.join(',')}]`) }, { weight: 1, arbitrary: json }), 2),
      inputs: fc.option(inputs, { nil: undefined }),
      context: rarely(json, 3),
    }).map((r): Request => ({
      key: r.key, method: 'POST', url: `/api/execute/${model}/${r.method}`,
      payload: objectText([
        ...(r.ids === undefined ? [] : [['ids', r.ids] as const]),
        ['request_body', objectText([...(r.inputs === undefined ? [] : [['inputs', r.inputs] as const]), ...(r.context === undefined ? [] : [['context', r.context] as const])])],
      ]),
    })) },
  );
});

// ---------------------------------------------------------------------------------------------
// Filters: Q-expressions over real paths and lookups, with hostile values, tokens and splices.
// ---------------------------------------------------------------------------------------------

interface PathTo {
  path: string;
  field: FieldInfo | null;
}

/** A field path of `model` (ManyToOne and to-many traversal, up to two hops) and its last field. */
function pathTo(model: string, sep: '__' | '.', hops = 2): fc.Arbitrary<PathTo> {
  const fieldInfos = models.get(model) ?? [];
  if (!fieldInfos.length) return fc.constant({ path: 'id', field: null });
  return fc.constantFrom(...fieldInfos).chain((f) => {
    const here = fc.constant({ path: f.name, field: f });
    if (!f.target || hops === 0 || !models.has(f.target)) return here;
    return fc.oneof(here, pathTo(f.target, sep, hops - 1).map((rest) => ({ path: `${f.name}${sep}${rest.path}`, field: rest.field })));
  });
}

function pathOf(model: string, sep: '__' | '.', hops = 2): fc.Arbitrary<string> {
  return pathTo(model, sep, hops).map((p) => p.path);
}

const escapedChar = fc.oneof(
  { weight: 16, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((c) => c !== "'" && c !== '\\') },
  { weight: 3, arbitrary: fc.constantFrom('\\n', '\\t', '\\\\', "\\'", '\\"', '\\u0041', '\\u00e9', '\\u0000', '\\ud800', '\\udc00', '\\ud83d\\ude00', '%', '_') },
  { weight: 1, arbitrary: fc.constantFrom('\\x41', '\\u12', '\\', '\\q') },
);
const stringLiteral = fc.oneof(
  { weight: 8, arbitrary: fc.array(escapedChar, { maxLength: 10 }).map((cs) => `'${cs.join('')}'`) },
  { weight: 2, arbitrary: fc.constantFrom("'2024-02-29'", "'2024-02-30'", "'0000-01-01'", "'10000-01-01'", "'NaN'", "'1e400'", "'1'", "'draft'", "'ProjectTask'", '"x"') },
  { weight: 1, arbitrary: fc.integer({ min: 995, max: 1005 }).map((n) => `'${'a'.repeat(n)}'`) },
);
const { value: filterValue } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 2, depthSize: 'small' },
    { weight: 5, arbitrary: stringLiteral },
    { weight: 4, arbitrary: fc.oneof({ weight: 8, arbitrary: numberText }, { weight: 1, arbitrary: fc.constantFrom('1.', '.5', '0x10', '1e', '--1', '1_000') }) },
    { weight: 3, arbitrary: fc.constantFrom('True', 'False', 'None', 'true', 'false', 'null', ...VARIABLES, 'x', '__import__') },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 4 }).map((vs) => `[${vs.join(', ')}]`) },
    { weight: 1, arbitrary: fc.array(tie('value'), { minLength: 1, maxLength: 3 }).map((vs) => `(${vs.join(', ')},)`) },
  ),
}));
const lookupSuffix = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 4, arbitrary: fc.constantFrom(...LOOKUPS).map((l) => `__${l}`) },
  { weight: 1, arbitrary: fc.constantFrom('__regex', '__year', '__id', '__', '___in') },
);

/** A filter literal of the field's own type (so conditions also reach the database). */
function literalFor(f: FieldInfo | null, lookup: string): fc.Arbitrary<string> {
  const one = (): fc.Arbitrary<string> => {
    switch (f?.type) {
      case 'Char': case 'Text': case 'Selection': return fc.oneof(fc.constantFrom(...(f.choices.length ? f.choices : ['a', 'x', 'red'])), fc.string({ maxLength: 6 }))
        .map((v) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
      case 'Boolean': return fc.constantFrom('True', 'False');
      case 'Integer': case 'Float': case 'Monetary': return fc.integer({ min: -5, max: 50 }).map(String);
      case 'Date': return fc.constantFrom("'2024-02-29'", "'2024-01-01'", 'today');
      case 'Datetime': return fc.constantFrom("'2024-02-29T10:00:00Z'", 'now');
      case 'ManyToOne': case 'OneToMany': case 'ManyToMany': case 'File': return fc.oneof(fc.integer({ min: 1, max: 30 }).map(String), fc.constantFrom('user_id', 'company_id', 'None'));
      default: return fc.integer({ min: 1, max: 30 }).map(String);
    }
  };
  if (lookup === '__in' || lookup === '__not_in') return fc.array(one(), { maxLength: 3 }).map((vs) => `[${vs.join(', ')}]`);
  if (lookup === '__range') return fc.tuple(one(), one()).map(([a, b]) => `[${a}, ${b}]`);
  if (lookup === '__isnull') return fc.constantFrom('True', 'False');
  return one();
}

const TEXT_LOOKUPS = ['', '__exact', '__not', '__in', '__not_in', '__contains', '__icontains', '__startswith', '__iendswith', '__isnull'];
const OTHER_LOOKUPS = ['', '__not', '__in', '__not_in', '__gt', '__lte', '__range', '__isnull'];

/**
 * A Q-expression over `model`. Clean ones use lookups and literals of each field's type, so they
 * run in the database; hostile ones mix in any value, odd paths, stray operators and splices.
 */
function filterOf(model: string, clean: boolean): fc.Arbitrary<string> {
  const typed = pathTo(model, '__').chain((p) => {
    const textual = ['Char', 'Text', 'Selection'].includes(p.field?.type ?? '');
    return fc.oneof({ weight: clean ? 1 : 3, arbitrary: fc.constantFrom(...(textual ? TEXT_LOOKUPS : OTHER_LOOKUPS)) }, { weight: clean ? 0 : 2, arbitrary: lookupSuffix })
      .chain((lookup) => fc.tuple(
        fc.constant(p.path + lookup),
        fc.oneof({ weight: 3, arbitrary: literalFor(p.field, lookup) }, { weight: clean ? 0 : 2, arbitrary: filterValue }),
      ));
  });
  const odd = fc.tuple(
    fc.constantFrom('id', 'display_name', '__proto__', 'constructor', 'nope', 'x__y__z', 'id__in__in', 'a'.repeat(300)), filterValue,
  );
  const call = fc.array(fc.oneof({ weight: 8, arbitrary: typed }, { weight: clean ? 0 : 1, arbitrary: odd }).map(([p, v]) => `${p}=${v}`), { maxLength: 3 })
    .map((args) => `Q(${args.join(', ')})`);
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { maxDepth: 4, depthSize: 'small' },
      { weight: 4, arbitrary: call },
      { weight: 2, arbitrary: fc.tuple(tie('expr'), fc.constantFrom(...(clean ? [' & ', ' | '] : [' & ', ' | ', '&', '|', ' OR '])), tie('expr')).map(([a, op, b]) => a + op + b) },
      { weight: 1, arbitrary: tie('expr').map((e) => `~${e}`) },
      { weight: 1, arbitrary: tie('expr').map((e) => `(${e})`) },
    ),
  }));
  if (clean) return expr;
  // A splice of hostile characters somewhere in an otherwise well-formed filter, or pure noise.
  const spliced = fc.tuple(expr, fc.nat(), fc.string({ unit: hostileChar, maxLength: 3 }), fc.nat(3))
    .map(([e, at, insert, cut]) => e.slice(0, at % (e.length + 1)) + insert + e.slice((at % (e.length + 1)) + cut));
  return fc.oneof({ weight: 8, arbitrary: expr }, { weight: 2, arbitrary: spliced }, { weight: 1, arbitrary: fc.string({ unit: hostileChar, maxLength: 30 }) });
}

const readRequests = (): fc.Arbitrary<Request> => fc.tuple(fc.constantFrom(...READ), fc.boolean()).chain(([model, clean]) => {
  const fieldPaths = fc.array(fc.oneof({ weight: 5, arbitrary: pathOf(model, '.') }, { weight: clean ? 0 : 1, arbitrary: text }), { maxLength: 4 });
  const orderEntry = fc.tuple(pathOf(model, '__', 1), fc.constantFrom(' ASC', ' DESC', '', ...(clean ? [] : [' asc', ' SIDEWAYS']))).map(([p, d]) => p + d);
  const term = clean ? fc.string({ maxLength: 6 }) : text;
  const limit = clean ? fc.integer({ min: 1, max: 100 }).map(String) : numberText;
  const query = fc.record({
    key: fc.nat(1),
    filter_str: fc.option(filterOf(model, clean), { nil: undefined }),
    fields: fc.option(fieldPaths, { nil: undefined }),
    order_by: rarely(fc.array(orderEntry, { maxLength: 2 }), 3),
    name_search: rarely(fc.array(term, { maxLength: 3 }), 3),
    group_fields: rarely(fc.array(pathOf(model, '__', 0), { maxLength: 2 })),
    counter: fc.option(fc.boolean(), { nil: undefined }),
    limit: rarely(limit),
  }).map(({ key, limit: pageSize, ...body }): Request => ({
    key, method: 'POST', url: `/api/query/${model}`,
    payload: objectText([
      ...Object.entries(body).filter(([, v]) => v !== undefined).map(([k, v]) => [k, JSON.stringify(v)] as const),
      ...(pageSize === undefined ? [] : [['limit', pageSize] as const]),
    ]),
  }));
  const nameSearch = fc.record({ key: fc.nat(1), term: fc.option(term, { nil: undefined }), filter: rarely(filterOf(model, clean), 2), limit: rarely(limit) })
    .map(({ key, term: searched, filter, limit: pageSize }): Request => ({
      key, method: 'POST', url: `/api/name_search/${model}`,
      payload: objectText([
        ...(searched === undefined ? [] : [['term', JSON.stringify(searched)] as const]),
        ...(filter === undefined ? [] : [['filter', JSON.stringify(filter)] as const]),
        ...(pageSize === undefined ? [] : [['limit', pageSize] as const]),
      ]),
    }));
  const fetch = fc.record({ key: fc.nat(1), id: clean ? idOf(model) : pathId, fields: fc.option(fieldPaths, { nil: undefined }) })
    .map(({ key, id, fields }): Request => ({
      key, method: 'POST', url: `/api/fetch/${model}/${encodeURIComponent(id)}`, payload: fields === undefined ? undefined : JSON.stringify({ fields }),
    }));
  return fc.oneof({ weight: 5, arbitrary: query }, { weight: 2, arbitrary: nameSearch }, { weight: 2, arbitrary: fetch });
});

/** `arb` one time in `every`, else undefined (an absent key). */
function rarely<T>(arb: fc.Arbitrary<T>, every = 6): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: every - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

/**
 * Rethrows a property failure as the failing request and answer (fast-check's own message would
 * quote the whole generated value, up to megabytes), with how to replay the run.
 */
function report(err: Error & { cause?: unknown }): never {
  const path = /path: "([^"]*)"/.exec(err.message)?.[1] ?? '?';
  const cause = err.cause instanceof Error ? err.cause.message : err.message.slice(0, 2000);
  throw new Error(`${cause}\n(seed ${SEED}, fast-check path ${path}: replay the run with FF_FUZZ_SEED=${SEED} npx vitest run test/http/fuzz.test.ts)`);
}

describe(`fuzzing the API (seed ${SEED})`, () => {
  it(`${FILTER_RUNS} generated filters, paths and search terms answer below 500 and change nothing`, async () => {
    const before = await checksum();
    const statuses = new Map<number, number>();
    await fc.assert(fc.asyncProperty(readRequests(), async (r) => {
      const status = await send(r);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }), { seed: SEED, numRuns: FILTER_RUNS, endOnFailure: true }).catch(report);
    expect(await checksum()).toBe(before);
    // Both kinds of answer were exercised: the generators reach the database, not only the parser.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(FILTER_RUNS / 10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(FILTER_RUNS / 10);
  }, 300_000);

  it(`${WRITE_RUNS} generated create, update, delete and execute bodies answer below 500; a refused one writes nothing`, async () => {
    let sum = await checksum();
    const statuses = new Map<number, number>();
    await fc.assert(fc.asyncProperty(writeRequests(), async (r) => {
      const status = await send(r);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const after = await checksum();
      if (status >= 400 && after !== sum) throw new Error(`${status} changed the data: ${describeRequest(r)}`);
      sum = after;
    }), { seed: SEED, numRuns: WRITE_RUNS, endOnFailure: true }).catch(report);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(WRITE_RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(WRITE_RUNS / 10);
  }, 300_000);
});
