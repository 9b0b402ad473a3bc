/**
 * `BENCH_ONLY=bulk-deadlock npm run bench`: the mixed bulk load of issue 25 item 4 through real
 * HTTP against a FieldForge server in its own process (bench/fieldforge-server.ts, the
 * administrator's API key): concurrent clients, each looping until the time is up over
 *
 * - 60 %: `PUT /api/bulk-update/Contact` by a selection (a filter on a random range of ids),
 * - 25 %: `POST /api/import/Contact` of rows matched by `match_fields: ["email"]`, a random
 *   overlapping set of existing contacts in a shuffled order,
 * - 15 %: `POST /api/export/Contact` of a random range of contacts (XLSX, read to the end).
 *
 * Printed: calls and non-2xx answers per kind (by status), p50/p99 latency per kind and overall,
 * and the deadlocks PostgreSQL detected in the database meanwhile (`pg_stat_database.deadlocks`;
 * a deadlocked unit of work is retried, so the answers alone would hide most of them).
 *
 * The issue's figures were measured with 100 clients for 2 minutes on 20,000+ contacts; the
 * defaults are smaller. Environment: BENCH_CLIENTS (20), BENCH_SECONDS (20), BENCH_CONTACTS
 * (20,000), BENCH_UPDATE_ROWS (1,000 per bulk update), BENCH_IMPORT_ROWS (1,000), BENCH_EXPORT_ROWS
 * (10,000), BENCH_SEED (1), BENCH_ROOT (the checkout whose server runs, for an A/B against another
 * build), BENCH_DATABASE_URL, BENCH_KEEP=1. Not a test: it prints and never fails CI.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';
import { BENCH_BASE_URL, createBenchDatabase, databaseUrl } from './bench-database.js';
import { percentile, textTable } from './bench-measures.js';

const number = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback) || fallback);
const CLIENTS = number('BENCH_CLIENTS', 20);
const SECONDS = number('BENCH_SECONDS', 20);
const CONTACTS = number('BENCH_CONTACTS', 20_000);
const UPDATE_ROWS = Math.min(number('BENCH_UPDATE_ROWS', 1_000), CONTACTS);
const IMPORT_ROWS = Math.min(number('BENCH_IMPORT_ROWS', 1_000), CONTACTS);
const EXPORT_ROWS = Math.min(number('BENCH_EXPORT_ROWS', 10_000), CONTACTS);
const KEEP = process.env.BENCH_KEEP === '1';
const ROOT = process.env.BENCH_ROOT;

const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** A small seeded generator: the same BENCH_SEED gives the same sequence of calls per client. */
function generator(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

type Kind = 'bulk-update' | 'import' | 'export';
interface Outcome { kind: Kind; status: number; ms: number }

/** One client's calls until `deadline`. */
async function client(k: number, server: ServerProcess, headers: Record<string, string>, ids: readonly number[], deadline: number, out: Outcome[]): Promise<void> {
  const random = generator(number('BENCH_SEED', 1) * 7919 + k);
  const base = `http://127.0.0.1:${server.port}`;
  const range = (size: number) => {
    const start = Math.floor(random() * (ids.length - size + 1));
    return ids.slice(start, start + size);
  };
  let round = 0;
  while (Date.now() < deadline) {
    const roll = random();
    const kind: Kind = roll < 0.6 ? 'bulk-update' : roll < 0.85 ? 'import' : 'export';
    let method = 'POST';
    let path: string;
    let body: unknown;
    if (kind === 'bulk-update') {
      const set = range(UPDATE_ROWS);
      method = 'PUT';
      path = '/api/bulk-update/Contact';
      body = { selection: { filter_str: `Q(id__gte=${set[0]}) & Q(id__lte=${set.at(-1)})` }, vals: { mobile: `b${k}.${round}` } };
    } else if (kind === 'import') {
      const set = range(Math.min(ids.length, IMPORT_ROWS * 2)).filter(() => random() < 0.5).slice(0, IMPORT_ROWS);
      for (let i = set.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [set[i], set[j]] = [set[j]!, set[i]!];
      }
      path = '/api/import/Contact';
      body = { fields: ['email', 'notes'], data: [['email', 'notes'], ...set.map((id) => [`bench${id}@deadlock.bench`, `i${k}.${round}`])], match_fields: ['email'] };
    } else {
      const set = range(EXPORT_ROWS);
      path = '/api/export/Contact';
      body = { fields: ['name', 'email', 'phone', 'mobile', 'notes'], filter_str: `Q(id__gte=${set[0]}) & Q(id__lte=${set.at(-1)})` };
    }
    const start = performance.now();
    let status: number;
    try {
      const res = await fetch(`${base}${path}`, { method, headers, body: JSON.stringify(body) });
      await res.arrayBuffer(); // an export is streamed: done once read to the end
      status = res.status;
    } catch {
      status = 0; // the connection failed
    }
    out.push({ kind, status, ms: performance.now() - start });
    round++;
  }
}

async function deadlocks(admin: pg.Client, dbName: string): Promise<number> {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ deadlocks: string }>('SELECT deadlocks FROM pg_stat_database WHERE datname = $1', [dbName]);
  return Number(rows[0]?.deadlocks ?? 0);
}

function report(outcomes: Outcome[], found: number, seconds: number): void {
  const out: string[] = [''];
  out.push(`Mixed bulk load: ${CLIENTS} clients for ${seconds.toFixed(0)} s on ${CONTACTS.toLocaleString('en')} contacts (bulk updates of ` +
    `${UPDATE_ROWS.toLocaleString('en')}, imports of ${IMPORT_ROWS.toLocaleString('en')}, exports of ${EXPORT_ROWS.toLocaleString('en')} rows)` +
    `${ROOT ? `, server from ${ROOT}` : ''};`);
  out.push(`${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}.`);
  out.push('');
  const header = ['calls', 'count', 'non-2xx', 'p50 ms', 'p99 ms'];
  const row = (label: string, list: Outcome[]) => {
    const bad = list.filter((o) => o.status < 200 || o.status >= 300);
    const byStatus = [...new Set(bad.map((o) => o.status))].sort().map((s) => `${bad.filter((o) => o.status === s).length}×${s || 'no answer'}`).join(' ');
    const ms = list.map((o) => o.ms);
    return [label, String(list.length), bad.length ? `${bad.length} (${byStatus})` : '0', percentile(ms, 50).toFixed(0), percentile(ms, 99).toFixed(0)];
  };
  const rows = [
    ...(['bulk-update', 'import', 'export'] as const).map((kind) => row(kind, outcomes.filter((o) => o.kind === kind))),
    row('all', outcomes),
  ];
  out.push(...textTable(header, rows));
  out.push('');
  out.push(`deadlocks detected by PostgreSQL in the database: ${found}`);
  console.log(out.join('\n'));
}

async function main(): Promise<void> {
  const dbName = `ffbench_deadlock_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BENCH_BASE_URL });
  let server: ServerProcess | null = null;
  let admin: pg.Client | null = null;
  const cleanup = async () => {
    if (server) await stopServerProcess(server).catch(() => {});
    await admin?.end().catch(() => {});
    if (!KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await engine.close().catch(() => {});
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    log(`creating ${dbName} (contacts)…`);
    const key = await createBenchDatabase(engine, dbName, ['contacts'], 'deadlock benchmark');
    admin = new pg.Client({ connectionString: databaseUrl(dbName) });
    await admin.connect();
    const { rows: [user] } = await admin.query<{ uid: number }>(`SELECT id AS uid FROM "user" WHERE identifier = 'core.user_admin'`);
    const { rows } = await admin.query<{ id: number }>(`INSERT INTO contact (name, email, active, is_company, created_date, created_by_id, updated_date, updated_by_id)
      SELECT 'Bench ' || g, 'bench' || g || '@deadlock.bench', TRUE, FALSE, now(), $1, now(), $1 FROM generate_series(1, ${CONTACTS}) g RETURNING id`, [user!.uid]);
    // The e-mails name the contacts' ids, so an import can address any contact by its e-mail.
    await admin.query(`UPDATE contact SET email = 'bench' || id || '@deadlock.bench' WHERE email LIKE '%@deadlock.bench'`);
    await admin.query('VACUUM ANALYZE contact');
    const ids = rows.map((r) => r.id).sort((a, b) => a - b);
    server = await startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BENCH_BASE_URL, BENCH_DB: dbName }, [], ROOT);
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    const before = await deadlocks(admin, dbName);
    log(`${CLIENTS} clients for ${SECONDS} s…`);
    const outcomes: Outcome[] = [];
    const start = Date.now();
    await Promise.all(Array.from({ length: CLIENTS }, (_, k) => client(k, server!, headers, ids, start + SECONDS * 1000, outcomes)));
    const seconds = (Date.now() - start) / 1000;
    // A backend hands its counters to the statistics once idle, at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    report(outcomes, (await deadlocks(admin, dbName)) - before, seconds);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
