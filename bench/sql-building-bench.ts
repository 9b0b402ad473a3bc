/**
 * CPU of building and compiling the SQL of real ORM statements (issue 15), no database involved:
 *
 * - the shapes below, assembled fragment by fragment exactly as the ORM assembles them (same
 *   nesting, same helpers), once with Kysely's `sql` and once with `db/sql-fragment.ts`; both must
 *   give the very text and parameters the ORM itself sends (checked first);
 * - the ORM's own read and create paths end to end (filter parsing, field tree, SQL, serialising)
 *   on a driver that answers at once, i.e. whatever the ORM builds its SQL with today.
 *
 * Shapes: (fetch) one ProjectTask with `name, tags.name` (a to-many json_agg sub-select), (list)
 * 50 tasks of a stage by deadline with `stage.name, assignee.name` (two ManyToOne joins, one under
 * company isolation) + filter + order + limit, (create) one task's INSERT … RETURNING with its link
 * check, (session) a request's credential look-up (`auth/sessions.ts`: one small statement with a
 * nested fragment, the kind the platform's own code sends — built with Kysely's `sql` until issue 26
 * made the fragment tag the only one). Prints figures and ratios; never fails.
 */
import {
  Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql as kyselySql,
  type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult,
} from 'kysely';
import type { AccessProfile, Permission } from '../src/access/access-profile.js';
import { resolveSession } from '../src/auth/sessions.js';
import { compileAccessPolicy } from '../src/access/access-policy.js';
import { sql as fragmentSql, type SqlFragment } from '../src/db/sql-fragment.js';
import { buildRegistry } from '../src/modules/installer.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { runInEnv } from '../src/orm/env.js';
import { makeEnv } from '../src/orm/transaction.js';
import { parseFilter } from '../src/orm/query/filter-parser.js';
import { QuerySet } from '../src/orm/queryset.js';

// --- a Kysely that compiles for PostgreSQL and answers every statement at once --------------------
const sent: CompiledQuery[] = [];
let capturing = false;
let answer: (q: CompiledQuery) => Record<string, unknown>[] = () => [];
class InstantConnection implements DatabaseConnection {
  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    if (capturing) sent.push(q);
    return { rows: answer(q) as R[] };
  }
  // eslint-disable-next-line require-yield
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('not streamed');
  }
}
class InstantDriver implements Driver {
  async init() {}
  async acquireConnection() { return new InstantConnection(); }
  async beginTransaction() {}
  async commitTransaction() {}
  async rollbackTransaction() {}
  async releaseConnection() {}
  async destroy() {}
}
const kysely = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new InstantDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

// --- the two ways of building -----------------------------------------------------------------------
type Built = { text: string; values: readonly unknown[] };
interface Kit {
  name: string;
  sql: any; // the tag with id/table/join/raw/lit/ref: both have the same surface
  compile(built: unknown): Built;
}
const kits: Kit[] = [
  { name: 'kysely sql', sql: kyselySql, compile: (b) => { const c = (b as ReturnType<typeof kyselySql>).compile(kysely); return { text: c.sql, values: c.parameters }; } },
  { name: 'sql-fragment', sql: fragmentSql, compile: (b) => ({ text: (b as SqlFragment).text, values: (b as SqlFragment).values }) },
];

// Shapes, helper by helper as the ORM builds them (select-plan, compile-filter, compile-order,
// query-scope, read-records, select-rows, execute-sql; create-records, reference-checks).
function orderItems(sql: any, alias: string, entries: [string, 'ASC' | 'DESC'][]) {
  return entries.map(([column, dir]) => sql`${sql.id(alias, column)} ${dir === 'DESC' ? sql`DESC` : sql`ASC`}${sql``}`);
}
function from(sql: any, table: string, alias: string, joins: { table: string; alias: string; on: unknown }[]) {
  const parts = [sql`${sql.table(table)} AS ${sql.id(alias)}`];
  for (const j of joins) parts.push(sql`LEFT JOIN ${sql.table(j.table)} AS ${sql.id(j.alias)} ON ${j.on}`);
  return sql.join(parts, sql` `);
}
function jsonObject(sql: any, alias: string, names: string[]) {
  const values = [['id', sql.id(alias, 'id')], ...names.map((n) => [n, sql.id(alias, n)])] as [string, unknown][];
  return sql`json_build_object(${sql.join(values.map(([name, value]) => sql`${sql.lit(name)}, ${value}`), sql`, `)})`;
}
function select(sql: any, columns: [string, unknown][], rest: unknown) {
  const list = sql.join(columns.map(([name, value]) => sql`${value} AS ${sql.id(name)}`), sql`, `);
  return sql`SELECT ${list} ${rest}`;
}

function fetchShape(sql: any, id: number) {
  const where = sql.join([sql`(${sql.id('t0', 'id')} = ${id})`], sql` AND `);
  const tail = sql`ORDER BY ${sql.join(orderItems(sql, 't0', [['sequence', 'ASC'], ['deadline', 'ASC'], ['id', 'ASC']]), sql`, `)}${sql``}${sql``}`;
  // tags: json_agg over the link table joined to the tags, in the tag's default order.
  const innerWhere = sql`TRUE`;
  const order = sql.join(orderItems(sql, 't1', [['name', 'ASC'], ['id', 'ASC']]), sql`, `);
  const aggregate = sql`coalesce(json_agg(${jsonObject(sql, 't1', ['name'])} ORDER BY ${order}), '[]'::json)`;
  const relFrom = sql`${sql.table('project_task_tags_rel')} AS ${sql.id('t2')}
      JOIN ${from(sql, 'project_tag', 't1', [])} ON ${sql.id('t1', 'id')} = ${sql.id('t2', 'project_tag_id')}`;
  const tags = sql`(SELECT ${aggregate} FROM ${relFrom} WHERE ${sql.id('t2', 'project_task_id')} = ${sql.id('t0', 'id')} AND ${innerWhere})`;
  const columns: [string, unknown][] = [['id', sql.id('t0', 'id')], ['name', sql.id('t0', 'name')], ['tags', tags]];
  return select(sql, columns, sql`FROM ${from(sql, 'project_task', 't0', [])} WHERE ${where} ${tail}`);
}

function listShape(sql: any, stage: number, companyIds: number[]) {
  const conditions = [sql`(${sql.id('t0', 'stage_id')} = ${stage})`, sql`${sql.id('t0', 'active')} IS TRUE`];
  const where = sql.join(conditions, sql` AND `);
  const tail = sql`ORDER BY ${sql.join(orderItems(sql, 't0', [['deadline', 'ASC'], ['id', 'ASC']]), sql`, `)}${sql` LIMIT ${50}`}${sql``}`;
  const stageOn = sql`${sql.id('t1', 'id')} = ${sql.id('t0', 'stage_id')}`;
  const company = sql.id('t2', 'company_id');
  const visible = sql`(${company} IS NULL OR ${company} = ANY(${[...companyIds]}::int[]))`;
  const assigneeOn = sql`${sql`${sql.id('t2', 'id')} = ${sql.id('t0', 'assignee_id')}`} AND ${visible}`;
  const link = (alias: string) => sql`CASE WHEN ${sql.id(alias, 'id')} IS NULL THEN NULL ELSE ${jsonObject(sql, alias, ['name'])} END`;
  const columns: [string, unknown][] = [
    ['id', sql.id('t0', 'id')], ['name', sql.id('t0', 'name')], ['deadline', sql.id('t0', 'deadline')],
    ['stage', link('t1')], ['assignee', link('t2')],
  ];
  const scopeFrom = from(sql, 'project_task', 't0', [
    { table: 'project_stage', alias: 't1', on: stageOn }, { table: 'contact', alias: 't2', on: assigneeOn },
  ]);
  return select(sql, columns, sql`FROM ${scopeFrom} WHERE ${where} ${tail}`);
}

const INSERTED = ['name', 'project_id', 'stage_id', 'assignee_id', 'deadline', 'priority', 'sequence', 'planned_hours',
  'effective_hours', 'active', 'created_date', 'created_by_id', 'updated_date', 'updated_by_id', 'remaining_hours', 'subtask_count'];
const RETURNED: [string, string][] = [['identifier', 'identifier'], ['created_date', 'created_date'], ['created_by_id', 'created_by'],
  ['updated_date', 'updated_date'], ['updated_by_id', 'updated_by'], ['name', 'name'], ['description', 'description'],
  ['project_id', 'project'], ['stage_id', 'stage'], ['priority', 'priority'], ['deadline', 'deadline'], ['parent_id', 'parent'],
  ['assignee_id', 'assignee'], ['sequence', 'sequence'], ['planned_hours', 'planned_hours'], ['effective_hours', 'effective_hours'],
  ['remaining_hours', 'remaining_hours'], ['subtask_count', 'subtask_count'], ['active', 'active']];

function createShape(sql: any, values: unknown[], companyIds: number[]) {
  const table = 'project_task';
  const returning = sql.join([sql`${sql.id(table, 'id')} AS "id"`, ...RETURNED.map(([c, n]) => sql`${sql.id(table, c)} AS ${sql.id(n)}`)], sql`, `);
  const rows = sql`VALUES ${sql.join([sql`(${sql.join(values)})`])}`;
  const company = sql.id('t0', 'company_id');
  const readable = sql.join([sql`(${company} IS NULL OR ${company} = ANY(${[...companyIds]}::int[]))`], sql` AND `);
  const check = sql`, EXISTS (SELECT 1 FROM ${from(sql, 'contact', 't0', [])} WHERE ${sql.id('t0', 'id')} = ${sql.id(table, 'assignee_id')} AND ${readable}) AS ${sql.id('__link_assignee')}`;
  const links = sql.join([check], sql``);
  return sql`INSERT INTO ${sql.table(table)}
      (${sql.join(INSERTED.map((c) => sql.id(c)))}) ${rows}
      RETURNING ${returning}${sql``}${links}`;
}

function sessionShape(sql: any, sessionId: number, uid: number) {
  const guard = sql`(to_regprocedure('ff_request_guard(integer,integer,integer,timestamptz)') IS NOT NULL)`;
  return sql`SELECT s.installing, s.registry_version, s.security_version, s.credential_version, a.expires_at,
      u.id AS user_id, u.company_id, ${guard} AS guard
    FROM ff_state s
    LEFT JOIN auth_session a ON a.id = ${sessionId} AND a.user_id = ${uid} AND a.revoked_at IS NULL AND a.expires_at > now()
    LEFT JOIN "user" u ON u.id = a.user_id AND u.active IS TRUE
    WHERE s.id = 1`;
}

// --- the ORM's own statements, for the check and the end-to-end figures ------------------------------
const registry = await buildRegistry(await ModuleCatalog.scan([BUILTIN_MODULES_DIR]), ['project']);
const everything = new Set<Permission>(['read', 'write', 'create', 'delete']);
const access: AccessProfile = {
  groupIds: [1, 2], companyIds: [1],
  rights: new Map([...registry.models.keys()].map((m) => [m, everything])),
  rules: new Map([['ApiKey', [{ id: 1, name: 'keys', global: true, perms: new Set<Permission>(['read']), filter: parseFilter('Q(service_account__company=None)') }]]]),
};
const env = makeEnv({} as never, registry, kysely, { uid: 2, companyId: 1, companyIds: [1], access: compileAccessPolicy(access) });
const task = registry.meta('ProjectTask');
const createVals = { name: 'Benchmark task', project: 1, stage: 1, assignee: 1, deadline: '2026-06-30' };
const orm: Record<'fetch' | 'list' | 'create' | 'session', () => Promise<unknown>> = {
  fetch: () => new QuerySet(task).public_only().with_archived().filter({ id: 42 }).read(['name', 'tags.name']),
  list: () => new QuerySet(task).public_only().filter('Q(stage=3)').order_by('deadline ASC').limit(50).offset(0).read(['name', 'deadline', 'stage.name', 'assignee.name']),
  create: () => task.cls.create(createVals),
  session: () => resolveSession(kysely, 42, 2),
};
// The INSERT answers one row whose link check passes; a create reads nothing else back here.
answer = (q) => (q.sql.startsWith('INSERT') ? [{ id: 7, __link_assignee: true }] : []);

async function ormStatement(run: () => Promise<unknown>): Promise<CompiledQuery> {
  sent.length = 0;
  capturing = true;
  await runInEnv(env, run);
  capturing = false;
  return sent[0]!;
}

const shapes = {
  fetch: (kit: Kit) => fetchShape(kit.sql, 42),
  list: (kit: Kit) => listShape(kit.sql, 3, [1]),
  create: (kit: Kit, values: unknown[]) => createShape(kit.sql, values, [1]),
  session: (kit: Kit) => sessionShape(kit.sql, 42, 2),
};

console.log('Building + compiling the SQL of one statement (no database), µs per statement:\n');
const iterations = Number(process.env.SQL_BENCH_ITERATIONS ?? 20000);
const ROUNDS = 7;
// The median of several rounds: the box is shared, a round that lost the CPU is left out.
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const time = (fn: () => unknown, n = Math.ceil(iterations / ROUNDS)): number => {
  for (let i = 0; i < Math.min(2000, n); i++) fn(); // warm-up
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / n);
  }
  return median(rounds);
};
const timeAsync = async (fn: () => Promise<unknown>, n: number): Promise<number> => {
  for (let i = 0; i < Math.min(500, n); i++) await fn();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn();
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / n);
  }
  return median(rounds);
};
const pad = (s: string, n: number) => s.padEnd(n);
const us = (v: number) => `${v.toFixed(1).padStart(6)} µs`;

for (const name of ['fetch', 'list', 'create', 'session'] as const) {
  const real = await ormStatement(orm[name]);
  const values = name === 'create' ? [...real.parameters.slice(0, -1)] : [];
  const build = (kit: Kit) => kit.compile(name === 'create' ? shapes.create(kit, values) : shapes[name](kit));
  const same = kits.map((kit) => {
    const b = build(kit);
    return b.text === real.sql && JSON.stringify(b.values) === JSON.stringify(real.parameters);
  });
  const [kyselyUs, fragmentUs] = kits.map((kit) => time(() => build(kit)));
  const ormUs = await timeAsync(() => runInEnv(env, orm[name]), Math.max(100, Math.ceil(iterations / 4 / ROUNDS)));
  console.log(`${pad(name, 7)} ${us(kyselyUs!)} kysely sql   ${us(fragmentUs!)} sql-fragment   ${(kyselyUs! / fragmentUs!).toFixed(1)}× faster `
    + `(${Math.round(100 * (1 - fragmentUs! / kyselyUs!))} % saved)   same text+params as the ORM: ${same.map((s) => (s ? 'yes' : 'NO')).join('/')}`
    + `   | ORM path end to end ${us(ormUs)}`);
}
console.log(`\n(${iterations} builds each, median of ${ROUNDS} rounds; "ORM path end to end" = QuerySet.read / create / resolveSession on an instant driver, with whatever src/ builds SQL with now)`);
await kysely.destroy();
