/**
 * `src/db/sql-fragment.ts` must give the very text and parameters Kysely's `sql` gives for the same
 * template (the ORM moved from one to the other without changing a statement), and work inside
 * Kysely's own `sql` where code mixes them. Compiled only: no database.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql as k, type RawBuilder } from 'kysely';
import { describe, expect, it } from 'vitest';
import { quoteIdentifier, sql as f, type SqlFragment } from '../../src/db/sql-fragment.js';

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

  it('refuses a Kysely expression or a function as a value (it would be sent as JSON, not SQL)', () => {
    expect(() => f`SELECT ${k`1`}`).toThrow(TypeError);
    expect(() => f`SELECT ${() => 1}`).toThrow(TypeError);
  });

  it('leaves objects (JSON values) and buffers as parameters', () => {
    const value = { a: 1 };
    const bytes = Buffer.from('x');
    expect(fragment(f`${value}, ${bytes}`)).toEqual({ text: '$1, $2', values: [value, bytes] });
  });

  it('quotes identifiers as PostgreSQL needs', () => {
    expect(quoteIdentifier('plain')).toBe('"plain"');
    expect(quoteIdentifier('a"b""c')).toBe('"a""b""""c"');
  });
});
