/**
 * `BENCH_ONLY=import npm run bench`: `POST /api/import/{model}` (issue 13 item 2 and 6) through real
 * HTTP against a FieldForge server in its own process (bench/fieldforge-server.ts, the
 * administrator's API key), each case beside a bare `COPY … FROM STDIN` of the same rows into the
 * same database in the same run (the ceiling: no checks, no defaults, no answer):
 *
 * (a) 100,000 flat contacts (name, email, phone, city, zip, job title, is-company) → rows/s, target
 *     ≥ 20,000. Baseline: one COPY of the same rows (audit columns filled by the client).
 * (b) 100,000 tasks with two ManyToOne resolved by name (project, stage) and one ManyToMany (tags,
 *     a comma-separated list of names) → rows/s, target ≥ 5,000. Baseline: the names resolved by
 *     one SELECT per table, then one COPY of the tasks (ids taken from the sequence beforehand) and
 *     one COPY of their tag links.
 * (c) the dry run of (a) and of (b): target within 1.5× of the real import's time.
 *
 * A request carries as many rows as fit in 15 MiB of JSON (the server's body limit is 16 MiB unless
 * FF_BODY_LIMIT says otherwise); the sizes are printed. Each case runs BENCH_ROUNDS (default 3)
 * rounds alternating FieldForge and the baseline; the rows a round wrote are deleted and the tables
 * vacuumed before the next call, so every call starts from the same state. Median times are printed
 * with the SQL statements FieldForge ran per import. Environment: BENCH_DATABASE_URL (else
 * DATABASE_URL, else the local server), BENCH_ROUNDS, BENCH_IMPORT_ROWS (default 100,000),
 * BENCH_KEEP=1, BENCH_PROFILE=1 (a CPU profile of the server during each case's first FieldForge
 * import, summarised on stderr). Not a test: it prints and never fails CI.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { formatSummary, summarizeProfiles, type CpuProfile } from './profile.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';
import { median, timed } from './bench-measures.js';
import { BENCH_BASE_URL, createBenchDatabase, databaseUrl } from './bench-database.js';

const BASE_URL = BENCH_BASE_URL;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const ROWS = Math.max(1, Number(process.env.BENCH_IMPORT_ROWS ?? 100_000));
const KEEP = process.env.BENCH_KEEP === '1';
const PROFILE = process.env.BENCH_PROFILE === '1';
/** Largest JSON body the bench sends (under the server's default 16 MiB limit). */
const MAX_BODY = 15 * 1024 * 1024;

const log = (msg: string) => process.stderr.write(`${msg}\n`);

// ------------------------------------------------------------------------------------------------
// The FieldForge server
// ------------------------------------------------------------------------------------------------

type Server = ServerProcess;

/** The FieldForge server of the benchmark (bench/fieldforge-server.ts) on `dbName`, in its own process. */
function startServer(dbName: string): Promise<Server> {
  return startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: dbName });
}

const stopServer = stopServerProcess;

async function statementCount(server: Server): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${server.port}/__cpu`);
  return ((await res.json()) as { statements: number }).statements;
}

/** The import bodies of `data` rows (header first): as few as fit in `MAX_BODY` each. */
function importBodies(fields: string[], rows: unknown[][], extra: Record<string, unknown>): string[] {
  for (let parts = 1; ; parts *= 2) {
    const size = Math.ceil(rows.length / parts);
    const bodies: string[] = [];
    for (let i = 0; i < rows.length; i += size) bodies.push(JSON.stringify({ fields, data: [fields, ...rows.slice(i, i + size)], ...extra }));
    if (bodies.every((b) => b.length <= MAX_BODY)) return bodies;
  }
}

/** Sends the import bodies one after the other; answers the records written (or would be) and the statements run. */
async function ffImport(server: Server, headers: Record<string, string>, model: string, bodies: string[]): Promise<{ records: number; statements: number }> {
  const before = await statementCount(server);
  let records = 0;
  for (const body of bodies) {
    const res = await fetch(`http://127.0.0.1:${server.port}/api/import/${model}`, { method: 'POST', headers, body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`import ${model} answered ${res.status}: ${text.slice(0, 400)}`);
    const answer = JSON.parse(text) as { summary: Record<string, number>; details: { errors: unknown[] } };
    if (answer.summary.errors) throw new Error(`import ${model} reported errors: ${JSON.stringify(answer.details.errors.slice(0, 3))}`);
    records += (answer.summary.created ?? 0) + (answer.summary.updated ?? 0) + (answer.summary.would_create ?? 0) + (answer.summary.would_update ?? 0);
  }
  return { records, statements: (await statementCount(server)) - before };
}

// ------------------------------------------------------------------------------------------------
// COPY FROM STDIN with the bare `pg` client (a minimal submittable, as pg-copy-streams does)
// ------------------------------------------------------------------------------------------------

interface PgConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

class CopyIn {
  private resolve!: () => void;
  private reject!: (err: unknown) => void;
  private failed: unknown = null;
  readonly done = new Promise<void>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
  constructor(private readonly text: string, private readonly payload: Buffer) {}
  submit(connection: PgConnection): void {
    connection.query(this.text);
  }
  handleCopyInResponse(connection: PgConnection): void {
    connection.sendCopyFromChunk(this.payload);
    connection.endCopyFrom();
  }
  handleCommandComplete(): void {}
  handleReadyForQuery(): void {
    if (this.failed) this.reject(this.failed);
    else this.resolve();
  }
  handleError(err: unknown): void {
    this.failed = err;
  }
}

/** `COPY <table> (<columns>) FROM STDIN` of `rows` in the text format. */
async function copyRows(client: pg.Client, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  const text = rows.map((r) => r.map((v) => (v === null ? '\\N' : String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n'))).join('\t')).join('\n');
  const copy = new CopyIn(`COPY ${table} (${columns.join(', ')}) FROM STDIN`, Buffer.from(`${text}\n`));
  client.query(copy as unknown as pg.QueryConfig);
  await copy.done;
}

// ------------------------------------------------------------------------------------------------
// Cases
// ------------------------------------------------------------------------------------------------

interface Seeded {
  uid: number;
  projects: { id: number; name: string }[];
  stages: { id: number; name: string }[];
  tags: { id: number; name: string }[];
}

interface CaseResult {
  key: string;
  title: string;
  ffMs: number[];
  bareMs: number[];
  statements: number;
  requests: number;
  bodyBytes: number;
  target: string;
  verdict: (ffMs: number, bareMs: number) => string;
}

const FLAT_FIELDS = ['name', 'email', 'phone', 'city', 'zip', 'job_title', 'is_company'];

function flatRows(round: number): unknown[][] {
  return Array.from({ length: ROWS }, (_, i) => [
    `Import ${round}-${i}`, `import${round}.${i}@bench.test`, `+33 1 ${String(i).padStart(8, '0')}`, `City ${i % 500}`,
    String(10000 + (i % 89999)), `Job ${i % 40}`, i % 10 === 0,
  ]);
}

const TASK_FIELDS = ['name', 'project', 'stage', 'tags', 'planned_hours', 'priority'];

function taskRows(seeded: Seeded, round: number): unknown[][] {
  const { projects, stages, tags } = seeded;
  return Array.from({ length: ROWS }, (_, i) => [
    `Import task ${round}-${i}`, projects[i % projects.length]!.name, stages[i % stages.length]!.name,
    i % 3 === 0 ? tags[0]!.name : `${tags[i % tags.length]!.name}, ${tags[(i + 1) % tags.length]!.name}`, i % 40, String(i % 3),
  ]);
}

async function bareFlat(client: pg.Client, seeded: Seeded, round: number): Promise<void> {
  const now = new Date().toISOString();
  const rows = flatRows(round).map((r) => [...r, true, now, seeded.uid, now, seeded.uid]);
  await copyRows(client, 'contact', [...FLAT_FIELDS, 'active', 'created_date', 'created_by_id', 'updated_date', 'updated_by_id'], rows);
}

async function bareTasks(client: pg.Client, seeded: Seeded, round: number): Promise<void> {
  const rows = taskRows(seeded, round);
  // What a bare import must do too: resolve each name once, then write.
  const names = async (table: string) => new Map((await client.query<{ id: number; name: string }>(`SELECT id, name FROM ${table}`)).rows.map((r) => [r.name, r.id]));
  const [projects, stages, tags] = [await names('project_project'), await names('project_stage'), await names('project_tag')];
  const { rows: ids } = await client.query<{ id: number }>(
    `SELECT nextval(pg_get_serial_sequence('project_task', 'id'))::int AS id FROM generate_series(1, $1)`, [rows.length]);
  const now = new Date().toISOString();
  const tasks: unknown[][] = [];
  const links: unknown[][] = [];
  rows.forEach((r, i) => {
    const id = ids[i]!.id;
    const planned = r[4] as number;
    tasks.push([id, r[0], projects.get(r[1] as string), stages.get(r[2] as string), planned, 0, planned, r[5], 10, 0, true, now, seeded.uid, now, seeded.uid]);
    for (const tag of new Set(String(r[3]).split(',').map((t) => t.trim()))) links.push([id, tags.get(tag)]);
  });
  await client.query('BEGIN');
  await copyRows(client, 'project_task', ['id', 'name', 'project_id', 'stage_id', 'planned_hours', 'effective_hours', 'remaining_hours', 'priority',
    'sequence', 'subtask_count', 'active', 'created_date', 'created_by_id', 'updated_date', 'updated_by_id'], tasks);
  await copyRows(client, 'project_task_tags_rel', ['project_task_id', 'project_tag_id'], links);
  await client.query('COMMIT');
}

async function runCases(server: Server, client: pg.Client, seeded: Seeded, headers: Record<string, string>): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const reset = async () => {
    // Foreign-key triggers off for the clean-up only (nothing references the imported rows): with
    // them, each deleted contact would look for contacts, orders, tasks… pointing at it.
    await client.query(`SET session_replication_role = replica`);
    await client.query(`DELETE FROM project_task_tags_rel r USING project_task t WHERE t.id = r.project_task_id AND t.name LIKE 'Import task %'`);
    await client.query(`DELETE FROM project_task WHERE name LIKE 'Import task %'`);
    await client.query(`DELETE FROM contact WHERE name LIKE 'Import %'`);
    await client.query(`SET session_replication_role = DEFAULT`);
    await client.query('VACUUM ANALYZE contact, project_task, project_task_tags_rel');
  };
  const measure = async (
    key: string, title: string, target: string, verdict: CaseResult['verdict'],
    bodies: (round: number) => string[], ff: (bodies: string[]) => Promise<{ records: number; statements: number }>, bare: ((round: number) => Promise<void>) | null,
  ) => {
    const out: CaseResult = { key, title, ffMs: [], bareMs: [], statements: 0, requests: 0, bodyBytes: 0, target, verdict };
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? ['ff', 'bare'] : ['bare', 'ff'];
      for (const who of order) {
        await reset();
        if (who === 'ff') {
          const sent = bodies(round);
          out.requests = sent.length;
          out.bodyBytes = Math.max(...sent.map((b) => b.length));
          const profiling = PROFILE && round === 1;
          if (profiling) await fetch(`http://127.0.0.1:${server.port}/__prof/start`, { method: 'POST' });
          const { ms, value } = await timed(() => ff(sent));
          if (profiling) {
            const profile = (await (await fetch(`http://127.0.0.1:${server.port}/__prof/stop`, { method: 'POST' })).json()) as CpuProfile;
            log(`  (${key}) CPU profile of the FieldForge server:\n${formatSummary(summarizeProfiles([profile], 30), sent.length)}`);
          }
          if (value.records !== ROWS) throw new Error(`(${key}) FieldForge imported ${value.records} records`);
          out.ffMs.push(ms);
          out.statements = value.statements;
        } else if (bare) {
          out.bareMs.push((await timed(() => bare(round))).ms);
        }
      }
      log(`  (${key}) round ${round}: FieldForge ${out.ffMs.at(-1)!.toFixed(0)} ms${bare ? `, bare ${out.bareMs.at(-1)!.toFixed(0)} ms` : ''}`);
    }
    results.push(out);
  };
  const rate = (ms: number) => ROWS / (ms / 1000);
  const atLeast = (min: number) => (ms: number) => `${rate(ms) >= min ? 'met' : 'MISSED'}`;

  await measure('a', `import of ${ROWS.toLocaleString('en')} flat contacts (7 columns)`, '≥ 20,000 rows/s', atLeast(20_000),
    (round) => importBodies(FLAT_FIELDS, flatRows(round), {}), (bodies) => ffImport(server, headers, 'Contact', bodies), (round) => bareFlat(client, seeded, round));
  await measure('b', `import of ${ROWS.toLocaleString('en')} tasks (project, stage by name; tags list)`, '≥ 5,000 rows/s', atLeast(5_000),
    (round) => importBodies(TASK_FIELDS, taskRows(seeded, round), {}), (bodies) => ffImport(server, headers, 'ProjectTask', bodies), (round) => bareTasks(client, seeded, round));
  const real = (key: string) => median(results.find((r) => r.key === key)!.ffMs);
  await measure('c-a', 'dry run of (a)', '≤ 1.5 × (a)', (ms) => (ms <= 1.5 * real('a') ? 'met' : 'MISSED'),
    (round) => importBodies(FLAT_FIELDS, flatRows(round), { dry_run: true }), (bodies) => ffImport(server, headers, 'Contact', bodies), null);
  await measure('c-b', 'dry run of (b)', '≤ 1.5 × (b)', (ms) => (ms <= 1.5 * real('b') ? 'met' : 'MISSED'),
    (round) => importBodies(TASK_FIELDS, taskRows(seeded, round), { dry_run: true }), (bodies) => ffImport(server, headers, 'ProjectTask', bodies), null);
  await reset();
  return results;
}

// ------------------------------------------------------------------------------------------------
// Setup and report
// ------------------------------------------------------------------------------------------------

async function seed(client: pg.Client): Promise<Seeded> {
  const { rows: [admin] } = await client.query<{ uid: number }>(`SELECT id AS uid FROM "user" WHERE identifier = 'core.user_admin'`);
  const uid = admin!.uid;
  await client.query(`INSERT INTO project_project (name, active, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Project ' || g, TRUE, 0, now(), $1, now(), $1 FROM generate_series(1, 20) g`, [uid]);
  await client.query(`INSERT INTO project_tag (name, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Tag ' || g, 0, now(), $1, now(), $1 FROM generate_series(1, 8) g`, [uid]);
  const named = async (text: string) => (await client.query<{ id: number; name: string }>(text)).rows;
  const projects = await named('SELECT id, name FROM project_project ORDER BY id');
  const stages = await named('SELECT id, name FROM project_stage ORDER BY sequence, id');
  const tags = await named('SELECT id, name FROM project_tag ORDER BY id');
  await client.query('ANALYZE');
  return { uid, projects, stages, tags };
}

function report(results: CaseResult[]): void {
  const out: string[] = [''];
  out.push(`Import: FieldForge through HTTP (its own process, API key) vs a bare COPY through pg, same database, same run;`);
  out.push(`median of ${ROUNDS} rounds; ${ROWS.toLocaleString('en')} rows per import; ${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}.`);
  out.push('');
  const header = ['case', 'FieldForge ms', 'rows/s', 'COPY ms', 'COPY rows/s', 'target', 'verdict', 'requests × largest body', 'statements'];
  const rows = results.map((r) => {
    const ff = median(r.ffMs);
    const bare = r.bareMs.length ? median(r.bareMs) : null;
    const rate = (ms: number) => Math.round(ROWS / (ms / 1000)).toLocaleString('en');
    return [`(${r.key}) ${r.title}`, ff.toFixed(0), rate(ff), bare === null ? '—' : bare.toFixed(0), bare === null ? '—' : rate(bare),
      r.target, r.verdict(ff, bare ?? 0), `${r.requests} × ${(r.bodyBytes / 1024 / 1024).toFixed(1)} MiB`, String(r.statements)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  out.push(line(header));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) out.push(line(r));
  console.log(out.join('\n'));
}

async function main(): Promise<void> {
  const dbName = `ffbench_import_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BASE_URL });
  let server: Server | null = null;
  let client: pg.Client | null = null;
  const cleanup = async () => {
    if (server) await stopServer(server).catch(() => {});
    await client?.end().catch(() => {});
    if (!KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await engine.close().catch(() => {});
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    log(`creating ${dbName} (contacts, project)…`);
    const key = await createBenchDatabase(engine, dbName, ['contacts', 'project'], 'import benchmark');
    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    const seeded = await seed(client);
    server = await startServer(dbName);
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    report(await runCases(server, client, seeded, headers));
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
