/**
 * `src/db/sql-fragment.ts` must give the very text and parameters Kysely's `sql` gives for the same
 * template (the ORM moved from one to the other without changing a statement), and work inside
 * Kysely's own `sql` where code mixes them. Compiled only: no database.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql as k, type RawBuilder } from 'kysely';
import { describe, expect, it } from 'vitest';
import { quoteIdentifier, sql as f, type SqlFragment } from '../../src/db/sql-fragment.js';
import * as fieldforge from '../../src/index.js';

const compiler = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

function kysely(b: RawBuilder<unknown>) {
  const c = b.compile(compiler);
  return { text: c.sql, values: [...c.parameters] };
}
function fragment(b: SqlFragment) {
  return { text: b.text, values: [...b.values] };
}

/** The same template built with either tag. */
const cases: [string, (s: any) => unknown][] = [
  ['plain text', (s) => s`SELECT 1`],
  ['empty', (s) => s``],
  ['values, arrays and null as parameters', (s) => s`WHERE a = ${1} AND b = ANY(${[1, 2]}::int[]) AND c IS ${null} AND d = ${'x'}`],
  ['identifiers, quotes doubled', (s) => s`SELECT ${s.id('t0', 'na"me')} AS ${s.id('a.b')} FROM ${s.table('x"y')}`],
  ['schema-qualified table', (s) => s`FROM ${s.table('public.task')}`],
  ['references', (s) => s`${s.ref('c')}, ${s.ref('u.c0')}, ${s.ref('s.t.c')}, ${s.ref(' u . c1 ')}`],
  ['literals', (s) => s`${s.lit("it's")}, ${s.lit(3)}, ${s.lit(true)}, ${s.lit(null)}, ${s.lit(new Date(0))}, ${s.lit('a\\b')}`],
  ['raw', (s) => s`ORDER BY x ${s.raw('DESC')}`],
  ['joins', (s) => s`(${s.join([1, s`a`, 2])}) ${s.join([s`x = ${1}`, s`y = ${2}`], s` AND `)} [${s.join([])}] ${s.join([s`z`], s``)}`],
  ['deep nesting keeps parameter order', (s) => {
    const inner = s`(${s.id('t1', 'id')} = ${10} OR ${s`${s.id('t1', 'x')} = ${11}`})`;
    return s`SELECT ${s.join([s`${12}`, inner], s`, `)} WHERE ${inner} AND ${s.join([13, 14])}`;
  }],
  ['empty fragments anywhere', (s) => s`${s``}SELECT${s``} 1${s.join([])} ${s`${s``}`}`],
  ['a separator holding a value', (s) => s`${s.join([s`a = ${1}`, 2, s`b`], s` OR ${3} OR `)}`],
  ['multi-part identifiers with dots and quotes', (s) => s`${s.id('s.x', 't"1', 'c')} ${s.table(' s . t ')} ${s.id('')}`],
  ['a typical ORM read: nested select, joins, literals, ids, values', (s) => {
    const obj = (alias: string) => s`json_build_object(${s.join([s`${s.lit('id')}, ${s.id(alias, 'id')}`, s`${s.lit('name')}, ${s.id(alias, 'name')}`])})`;
    const from = s.join([s`${s.table('project_task')} AS ${s.id('t0')}`, s`LEFT JOIN ${s.table('contact')} AS ${s.id('t1')} ON ${s.id('t1', 'id')} = ${s.id('t0', 'assignee_id')} AND (${s.id('t1', 'company_id')} = ANY(${[1, 2]}::int[]))`], s` `);
    return s`SELECT ${s.id('t0', 'id')} AS "id", ${obj('t1')} AS ${s.id('assignee')} FROM ${from} WHERE ${s.join([s`(${s.id('t0', 'stage_id')} = ${3})`, s`${s.id('t0', 'active')} IS TRUE`], s` AND `)} ORDER BY ${s.id('t0', 'deadline')} ${s.raw('ASC')} LIMIT ${50}`;
  }],
  ['a typical ORM insert: VALUES rows and RETURNING', (s) => s`INSERT INTO ${s.table('project_task')} (${s.join(['name', 'stage_id'].map((c) => s.id(c)))}) VALUES ${s.join([s`(${s.join(['a', 1])})`, s`(${s.join(['b', null])})`])} RETURNING ${s.id('project_task', 'id')} AS "id"`],
];

describe('sql fragments', () => {
  it.each(cases)('%s: same text and parameters as Kysely', (_name, build) => {
    expect(fragment(build(f) as SqlFragment)).toEqual(kysely(build(k) as RawBuilder<unknown>));
  });

  it('works inside Kysely sql (interop), parameters renumbered in place', () => {
    const cond = f`${f.id('t', 'a')} = ${5} AND b = ANY(${[1, 2]})`;
    expect(kysely(k`SELECT ${1}, x WHERE ${cond} AND c = ${'z'}`)).toEqual({
      text: 'SELECT $1, x WHERE "t"."a" = $2 AND b = ANY($3) AND c = $4', values: [1, 5, [1, 2], 'z'],
    });
  });

  it("is what module code gets from 'fieldforge'", () => {
    expect(fieldforge.sql).toBe(f);
  });

  it('sql.empty is the empty statement', () => {
    expect(fragment(f.empty)).toEqual(kysely(k``));
    expect(fragment(f`a${f.empty}b`)).toEqual({ text: 'ab', values: [] });
  });

  it('refuses what cannot be a bind value, saying what and where (pg would send it as text such as {})', () => {
    expect(() => f`SELECT ${k`1`}`).toThrow(TypeError);
    expect(() => f`SELECT ${k`1`}`).toThrow(/value 1 \(after "SELECT "\) is a Kysely expression/);
    expect(() => f`SELECT ${1}, ${() => 1}`).toThrow(/value 2 \(after ", "\) is a function/);
    expect(() => f`WHERE id = ${Promise.resolve(1)}`).toThrow(/is a promise \(a missing await\?\)/);
    expect(() => f`WHERE id = ${Symbol('x')}`).toThrow(/is a symbol/);
    expect(() => f`WHERE id = ANY(${new Set([1])})`).toThrow(/is a Set/);
    expect(() => f`WHERE data = ${new Map()}`).toThrow(/is a Map/);
    expect(() => f.join([1, new Set([2])])).toThrow(/value 2 .* is a Set/);
    // A fragment of another copy of this module (fieldforge loaded twice) is not silently a JSON value either.
    class SqlFragment { toOperationNode() { return null; } }
    expect(() => f`SELECT ${new SqlFragment()}`).toThrow(/another copy of src\/db\/sql-fragment\.ts/);
  });

  it('leaves objects (JSON values), arrays, dates, buffers, null and undefined as parameters', () => {
    const value = { a: 1 };
    const bytes = Buffer.from('x');
    const when = new Date(0);
    expect(fragment(f`${value}, ${bytes}, ${[1, { b: 2 }]}, ${when}, ${null}, ${undefined}, ${10n}`)).toEqual({
      text: '$1, $2, $3, $4, $5, $6, $7', values: [value, bytes, [1, { b: 2 }], when, null, undefined, 10n],
    });
  });

  it('quotes identifiers as PostgreSQL needs', () => {
    expect(quoteIdentifier('plain')).toBe('"plain"');
    expect(quoteIdentifier('a"b""c')).toBe('"a""b""""c"');
  });
});
