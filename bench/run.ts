/**
 * `npm run bench`: FieldForge's model API against a bare `node:http` + `pg` server doing the same
 * work (bench/bare-server.ts), on PostgreSQL with 100,000 tasks over 1,000 contacts, with an API
 * key and 10 concurrent connections. Not a test: it prints figures and never fails CI.
 *
 * 1. Creates a fresh database `ffbench_<random>` with core + contacts + project and an admin API
 *    key, seeds it with bulk SQL (setup, not measured) and ANALYZEs it.
 * 2. Starts each server as a child process (so the CPU time measured is the server's alone, not
 *    the load generator's), checks that both answer every case the same way, then for each case
 *    runs autocannon against each server: a warm-up, then measured runs interleaved A B B A…
 *    (other work on the machine then weighs on both servers alike).
 * 3. Prints req/s, p50/p99 latency, server CPU per request (the Node process, and the PostgreSQL
 *    backends serving it, read from /proc), SQL statements per request, and FieldForge's req/s as
 *    a ratio of the bare server's against the target.
 * 4. Drops the database (also on error or Ctrl-C).
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_DURATION (measured seconds per case and server, default 8), BENCH_ROUNDS (in how many
 * interleaved runs, default 4), BENCH_WARMUP (seconds, default 1),
 * BENCH_CONNECTIONS (default 10), BENCH_CASES (e.g. `a,d`), BENCH_PROFILE=1 (CPU-profile the
 * FieldForge server during each measured run and print where its time goes), BENCH_SQL=1 (print
 * the statements FieldForge runs for one request of each case), BENCH_KEEP=1 (keep the database);
 * BENCH_BARE_AUTH=db and BENCH_BARE_PREPARED=0 change the bare server (see bare-server.ts).
 * The measuring itself is api-load.ts, shared with ceiling-bench.ts.
 */
import { availableParallelism, loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import type { AutocannonRequest } from 'autocannon';
import pg from 'pg';
import { hashApiKey } from '../src/auth/api-keys.js';
import {
  CONNECTIONS, DURATION, ROUNDS, WARMUP, benchRun, callBoth, figuresOf, log, logStatements, measureCase, pad,
  startServer, table, type Measured,
} from './api-load.js';
import { formatSummary, summarizeProfiles } from './profile.js';
import { BENCH_BASE_URL, databaseUrl } from './bench-database.js';

const BASE_URL = BENCH_BASE_URL;
const TASKS = 100_000;
const CONTACTS = 1_000;
const PROJECTS = 20;
const TAGS = 10;

type CaseKey = 'a' | 'b' | 'c' | 'd';

interface Seeded {
  stageIds: number[];
  projectIds: number[];
  contactIds: number[];
  taskIdRange: [number, number];
}

interface BenchCase {
  key: CaseKey;
  title: string;
  target: number;
  /** The request for autocannon (the same for both servers). */
  request: AutocannonRequest;
  /** One concrete request, for the correctness check. */
  sample(): { path: string; body: unknown };
  /** Checks the two answers to `sample()`; returns a description or throws. */
  check(ff: unknown, bare: unknown): string;
}

// ------------------------------------------------------------------------------------------------
// Setup: database, key, seed
// ------------------------------------------------------------------------------------------------

async function seed(client: pg.Client): Promise<Seeded> {
  const { rows: [admin] } = await client.query<{ uid: number; company: number }>(
    `SELECT u.id AS uid, u.company_id AS company FROM "user" u WHERE u.identifier = 'core.user_admin'`,
  );
  const audit = [admin!.uid, admin!.company];
  await client.query('BEGIN');
  await client.query(`INSERT INTO contact (name, email, phone, city, is_company, active, company_id,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Contact ' || lpad(g::text, 4, '0'), 'contact' || g || '@example.com', '+1 555 ' || lpad(g::text, 4, '0'),
      (ARRAY['Lyon', 'Porto', 'Ghent', 'Turin', 'Basel'])[1 + g % 5], FALSE, TRUE, $2, now(), $1, now(), $1
    FROM generate_series(1, ${CONTACTS}) g`, audit);
  await client.query(`INSERT INTO project_tag (name, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Tag ' || lpad(g::text, 2, '0'), g % 8, now(), $1, now(), $1 FROM generate_series(1, ${TAGS}) g`, [admin!.uid]);
  await client.query(`INSERT INTO project_project (name, active, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Project ' || lpad(g::text, 2, '0'), TRUE, g % 8, now(), $1, now(), $1 FROM generate_series(1, ${PROJECTS}) g`, [admin!.uid]);
  // Stages round-robin (20,000 each), deadlines spread over 2026, one of 1,000 contacts each,
  // 1% archived; every third task gets two tags.
  await client.query(`WITH p AS (SELECT array_agg(id ORDER BY id) AS a FROM project_project),
      s AS (SELECT array_agg(id ORDER BY sequence, id) AS a FROM project_stage),
      c AS (SELECT array_agg(id ORDER BY id) AS a FROM contact)
    INSERT INTO project_task (name, project_id, stage_id, priority, deadline, assignee_id, sequence,
      planned_hours, effective_hours, remaining_hours, subtask_count, active,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Task ' || g, p.a[1 + (g / 7) % array_length(p.a, 1)], s.a[1 + g % array_length(s.a, 1)], (g % 3)::text,
      DATE '2026-01-01' + ((g * 7919) % 365), c.a[1 + (g * 31) % array_length(c.a, 1)], 10,
      (g % 40)::float8, (g % 17)::float8, (g % 40 - g % 17)::float8, 0, g % 100 <> 0,
      now(), $1, now(), $1
    FROM generate_series(1, ${TASKS}) g, p, s, c`, [admin!.uid]);
  await client.query(`WITH tg AS (SELECT array_agg(id ORDER BY id) AS a FROM project_tag)
    INSERT INTO project_task_tags_rel (project_task_id, project_tag_id)
    SELECT t.id, tg.a[1 + t.id % ${TAGS}] FROM project_task t, tg WHERE t.id % 3 = 0
    UNION ALL
    SELECT t.id, tg.a[1 + (t.id + 3) % ${TAGS}] FROM project_task t, tg WHERE t.id % 3 = 0`);
  await client.query('COMMIT');
  await client.query('ANALYZE');
  const ids = async (sql: string) => (await client.query<{ id: number }>(sql)).rows.map((r) => r.id);
  const { rows: [range] } = await client.query<{ lo: number; hi: number }>('SELECT min(id) AS lo, max(id) AS hi FROM project_task');
  return {
    stageIds: await ids('SELECT id FROM project_stage ORDER BY sequence, id'),
    projectIds: await ids('SELECT id FROM project_project ORDER BY id'),
    contactIds: await ids('SELECT id FROM contact ORDER BY id'),
    taskIdRange: [range!.lo, range!.hi],
  };
}

// ------------------------------------------------------------------------------------------------
// Cases
// ------------------------------------------------------------------------------------------------

function cases(seeded: Seeded, headers: Record<string, string>): BenchCase[] {
  const listStage = seeded.stageIds[1]!;
  const countStage = seeded.stageIds[2]!;
  const [lo, hi] = seeded.taskIdRange;
  // Tasks whose id is a multiple of 3 have two tags.
  const taggedId = () => {
    const id = lo + Math.floor(Math.random() * (hi - lo + 1));
    return Math.max(3, id - (id % 3));
  };
  const post = (path: string, body: unknown): AutocannonRequest => ({ method: 'POST', path, headers, body: JSON.stringify(body) });

  const listBody = { filter_str: `Q(stage=${listStage})`, order_by: ['deadline ASC'], limit: 50, fields: ['name', 'deadline', 'stage.name', 'assignee.name'] };
  const fetchBody = { fields: ['name', 'tags.name'] };
  const createBody = {
    name: 'Benchmark task', project: seeded.projectIds[0], stage: seeded.stageIds[0],
    assignee: seeded.contactIds[0], deadline: '2026-06-30',
  };
  const countBody = { filter_str: `Q(stage=${countStage})`, counter: true, limit: 1, fields: ['id'], order_by: ['id ASC'] };

  const same = (ff: unknown, bare: unknown, what: string) => {
    if (!isDeepStrictEqual(ff, bare)) {
      throw new Error(`${what}: the answers differ\n  fieldforge: ${JSON.stringify(ff).slice(0, 600)}\n  bare:       ${JSON.stringify(bare).slice(0, 600)}`);
    }
  };
  return [
    {
      key: 'a', target: 0.5,
      title: 'query 50 tasks of a stage by deadline, with stage.name + assignee.name',
      request: post('/api/query/ProjectTask', listBody),
      sample: () => ({ path: '/api/query/ProjectTask', body: listBody }),
      check(ff, bare) {
        if (!Array.isArray(ff) || ff.length !== 50) throw new Error(`(a) expected 50 tasks, got ${JSON.stringify(ff).slice(0, 200)}`);
        same(ff, bare, '(a)');
        const first = ff[0] as { stage: { name: string }; assignee: { name: string } };
        return `50 tasks, identical on both; first: stage '${first.stage.name}', assignee '${first.assignee.name}'`;
      },
    },
    {
      key: 'b', target: 0.4,
      title: 'fetch one task with tags.name (random task)',
      request: {
        ...post('/api/fetch/ProjectTask/3', fetchBody),
        setupRequest: (req) => ({ ...req, path: `/api/fetch/ProjectTask/${taggedId()}` }),
      },
      sample: () => ({ path: `/api/fetch/ProjectTask/${taggedId()}`, body: fetchBody }),
      check(ff, bare) {
        const tags = (ff as { tags?: unknown[] }).tags;
        if (!Array.isArray(tags) || tags.length !== 2) throw new Error(`(b) expected a task with 2 tags, got ${JSON.stringify(ff).slice(0, 200)}`);
        same(ff, bare, '(b)');
        return `task ${(ff as { id: number }).id} with 2 tags, identical on both`;
      },
    },
    {
      key: 'c', target: 0.3,
      title: 'create one task (name, project, stage, assignee, deadline)',
      request: post('/api/create/ProjectTask', createBody),
      sample: () => ({ path: '/api/create/ProjectTask', body: createBody }),
      check(ff, bare) {
        for (const [who, a] of [['fieldforge', ff], ['bare', bare]] as const) {
          const r = a as { id?: unknown; name?: unknown; display_name?: unknown };
          if (typeof r.id !== 'number' || r.name !== createBody.name || r.display_name !== createBody.name) {
            throw new Error(`(c) ${who} answered ${JSON.stringify(a)}`);
          }
        }
        return `created ${(ff as { id: number }).id} and ${(bare as { id: number }).id}, same answer shape`;
      },
    },
    {
      key: 'd', target: 0.8,
      title: 'counter of the tasks of a stage (count + 1-row page)',
      request: post('/api/query/ProjectTask', countBody),
      sample: () => ({ path: '/api/query/ProjectTask', body: countBody }),
      check(ff, bare) {
        const n = (ff as { count?: unknown }).count;
        if (typeof n !== 'number' || n <= 0) throw new Error(`(d) expected a count, got ${JSON.stringify(ff).slice(0, 200)}`);
        same(ff, bare, '(d)');
        return `count ${n} on both`;
      },
    },
  ];
}

// ------------------------------------------------------------------------------------------------
// Output
// ------------------------------------------------------------------------------------------------

function printResults(all: { c: BenchCase; ff: Measured; bare: Measured }[], dbName: string, elapsed: number, loadBefore: number): void {
  const out: string[] = [];
  out.push('');
  out.push(`FieldForge vs bare node:http + pg: ${TASKS.toLocaleString('en')} tasks, ${CONTACTS.toLocaleString('en')} contacts, API key, ${CONNECTIONS} connections;`);
  out.push(`per case and server ${DURATION} s of load in ${ROUNDS} interleaved rounds (A B B A…), after a ${WARMUP} s warm-up each.`);
  out.push(`Database ${dbName}; ${availableParallelism()} CPU cores shared by PostgreSQL, the server under load and the load generator (and anything else running).`);
  out.push(`Bare server: key checked ${process.env.BENCH_BARE_AUTH === 'db' ? 'in the database on every request' : 'in memory'}, statements ${process.env.BENCH_BARE_PREPARED === '0' ? 'unnamed' : 'prepared (named)'}.`);
  out.push('CPU µs/req: the server process (node; sys% of it in the kernel) and the PostgreSQL backends of its pool (PG);');
  out.push('SQL/req: statements per request, as each server counts them.');
  out.push('');
  const rows: string[][] = [];
  for (const { c, ff, bare } of all) {
    for (const [label, m] of [['FieldForge', ff], ['bare http+pg', bare]] as const) {
      const f = figuresOf(m);
      rows.push([
        `(${c.key})`, label, f.rate.toFixed(0), f.p50.toFixed(1), f.p99.toFixed(1), f.nodeUs.toFixed(0), f.sysPct.toFixed(0),
        f.pgUs === null ? 'n/a' : f.pgUs.toFixed(0), f.sqlPerRequest.toFixed(2), String(m.errors),
      ]);
    }
  }
  out.push(...table(
    ['case', 'server', 'req/s', 'p50 ms', 'p99 ms', 'node µs/req', 'sys%', 'PG µs/req', 'SQL/req', 'errors'],
    [5, 14, 8, 7, 7, 12, 5, 10, 8, 6], rows, 2,
  ));
  out.push('');
  out.push('FieldForge / bare, req/s (measured) against the target; then node CPU per request (bare / FieldForge) and');
  out.push('node+PG CPU per request (bare / FieldForge), which is what req/s tends to when the machine is CPU-bound:');
  for (const { c, ff, bare } of all) {
    const [f, b] = [figuresOf(ff), figuresOf(bare)];
    const ratio = f.rate / b.rate;
    out.push(`  (${c.key}) ${pad(c.title, 70)} ${ratio.toFixed(2)}  target ≥ ${c.target.toFixed(1)}  ${pad(ratio >= c.target ? 'met' : 'MISSED', 6)}  node CPU ${(b.nodeUs / f.nodeUs).toFixed(2)}  node+PG CPU ${(b.totalUs / f.totalUs).toFixed(2)}`);
  }
  out.push('');
  out.push(`whole run ${elapsed.toFixed(0)} s; 1-minute load average ${loadBefore.toFixed(1)} before measuring, ${loadavg()[0]!.toFixed(1)} after`);
  console.log(out.join('\n'));
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const run = benchRun();
  const { dbName } = run;

  try {
    const { client: admin, accounts: [account] } = await run.open(['contacts', 'project'], [
      { name: 'benchmark', groups: ['core.group_admin', 'core.group_user'] },
    ]);
    const { key, userId } = account!;

    const t0 = Date.now();
    log(`seeding ${CONTACTS} contacts, ${TAGS} tags, ${PROJECTS} projects, ${TASKS} tasks…`);
    const seeded = await seed(admin);
    log(`  ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const ff = await startServer('fieldforge', { DATABASE_URL: BASE_URL, BENCH_DB: dbName, FF_DB_POOL_MAX: '10' });
    run.servers.push(ff);
    const bare = await startServer('bare', { BENCH_DB_URL: databaseUrl(dbName), BENCH_KEY_HASH: hashApiKey(key), BENCH_UID: String(userId) });
    run.servers.push(bare);

    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    const only = (process.env.BENCH_CASES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const selected = cases(seeded, headers).filter((c) => !only.length || only.includes(c.key));

    log('checking answers…');
    for (const c of selected) {
      const { path, body } = c.sample();
      const answers = await callBoth(ff, bare, `(${c.key})`, path, headers, body);
      log(`  (${c.key}) ok: ${c.check(answers.ff, answers.bare)}`);
      logStatements(answers.statements);
    }

    const loadBefore = loadavg()[0]!;
    const results: { c: BenchCase; ff: Measured; bare: Measured }[] = [];
    for (const c of selected) {
      log(`measuring (${c.key}) ${c.title}…`);
      const m = await measureCase(c.request, ff, bare, admin, dbName);
      results.push({ c, ...m });
      if (m.ff.profiles.length) {
        log(`  FieldForge CPU profile of (${c.key}), ${m.ff.served} requests:`);
        log(formatSummary(summarizeProfiles(m.ff.profiles, 25), m.ff.served));
      }
    }
    printResults(results, dbName, (Date.now() - started) / 1000, loadBefore);
  } finally {
    await run.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exitCode = 1;
});
