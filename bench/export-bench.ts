/**
 * `BENCH_ONLY=export npm run bench`: the streamed XLSX export (issue 13 items 1 and 6) through
 * real HTTP against a FieldForge server in its own process (bench/fieldforge-server.ts), with the
 * server process's time and resident memory:
 *
 * (a) 100,000 tasks × 10 columns (name, assignee's name, deadline date, stage's name, priority
 *     label, three Float hours, sequence, active) → seconds to the last byte and the server's peak
 *     RSS. Target ≤ 3 s and ≤ 250 MiB. Baseline in the same run: the same rows read by plain SQL in
 *     the same keyset pages (`pg`, a JOIN per relation) into the same XLSX writer, in a process of
 *     its own (its RSS is its own peak).
 * (b) 1,000,000 tasks, the same columns → seconds, peak RSS, and the RSS sampled along the
 *     download: it must not grow beyond (a)'s.
 * (c) The XLSX writers compared on the same synthetic 100,000 rows × 10 columns, each in a process
 *     of its own: exceljs's streaming `WorkbookWriter` (`useSharedStrings: false`, number formats
 *     only) and FieldForge's inline-string writer on its own zip stream (src/api/export/xlsx-stream-writer.ts).
 *     BENCH_WRITERS_ROWS (default 100000; 1000000 takes exceljs about a minute).
 *
 * RSS is sampled from /proc/<pid>/status every 20 ms (Linux). (a) runs BENCH_ROUNDS (default 3)
 * interleaved rounds and prints the median time and the highest peak. Environment:
 * BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_EXPORT_ROWS (case (b), default
 * 1,000,000), BENCH_SERVER_NODE_ARGS (V8 flags for the server), BENCH_KEEP=1 (keep the database). Not a test: it
 * prints figures and never fails CI.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { XlsxStreamWriter } from '../src/api/export/xlsx-stream-writer.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { memoryOf, startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';
import { median } from './bench-measures.js';
import { BENCH_BASE_URL, createBenchDatabase, databaseUrl } from './bench-database.js';

const BASE_URL = BENCH_BASE_URL;
const KEEP = process.env.BENCH_KEEP === '1';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const SMALL = 100_000;
/** Node options of the FieldForge server only (BENCH_SERVER_NODE_ARGS, e.g. `--max-semi-space-size=4`). */
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** Rows of case (b) (BENCH_EXPORT_ROWS, at least the 100,000 of case (a)). */
const LARGE = Math.max(SMALL + 1, Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000));
const CONTACTS = 1_000;
const WRITER_ROWS = Number(process.env.BENCH_WRITERS_ROWS ?? SMALL);
const FIELDS = ['name', 'assignee', 'deadline', 'stage', 'priority', 'planned_hours', 'effective_hours', 'remaining_hours', 'sequence', 'active'];
const PAGE = 1000;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const mib = (kib: number) => Math.round(kib / 1024);

/** A sink that takes bytes as fast as they come and counts them. */
function discard(): Writable & { bytes: number } {
  const sink = new Writable({
    highWaterMark: 1 << 16,
    write(chunk: Buffer, _encoding, done) {
      sink.bytes += chunk.length;
      done();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}

// ------------------------------------------------------------------------------------------------
// Child roles: a writer alone, or the baseline (plain SQL pages into the writer)
// ------------------------------------------------------------------------------------------------

const HEADERS = ['Name', 'Assignee', 'Deadline', 'Stage', 'Priority', 'Planned', 'Effective', 'Remaining', 'Sequence', 'Active'];

async function writerRole(kind: string, rows: number): Promise<void> {
  const start = performance.now();
  const sink = discard();
  const synthetic = (i: number): [string, string, string, string, string, number, number, number, number, boolean] =>
    [`Task ${i}`, `Contact ${i % CONTACTS}`, `2026-${String(1 + (i % 12)).padStart(2, '0')}-15`, 'In progress', 'Normal', i % 40, i % 17, (i % 40) - (i % 17), 10, i % 100 !== 0];
  if (kind === 'exceljs') {
    const ExcelJS = createRequire(import.meta.url)('exceljs') as typeof import('exceljs');
    const finished = new Promise((resolve) => sink.on('finish', resolve));
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useSharedStrings: false, useStyles: true });
    const sheet = workbook.addWorksheet('Tasks');
    sheet.columns = HEADERS.map((header, i) => ({ header, key: String(i), style: i === 2 ? { numFmt: 'yyyy-mm-dd' } : {} }));
    for (let i = 1; i <= rows; i++) {
      const r = synthetic(i);
      sheet.addRow([r[0], r[1], new Date(`${r[2]}T00:00:00Z`), ...r.slice(3)]).commit();
    }
    sheet.commit();
    await workbook.commit();
    await finished;
  } else {
    const xlsx = new XlsxStreamWriter({ sheetName: 'Tasks' });
    const finished = new Promise((resolve) => xlsx.output.pipe(sink).on('finish', resolve));
    const date = xlsx.numberFormat('yyyy-mm-dd');
    await xlsx.writeRow(HEADERS, { header: true });
    for (let i = 1; i <= rows; i++) {
      const r = synthetic(i);
      const room = xlsx.writeRow([r[0], r[1], xlsx.date(r[2], date), ...r.slice(3)]);
      if (room) await room;
    }
    await xlsx.end();
    await finished;
  }
  const seconds = (performance.now() - start) / 1000;
  console.log(JSON.stringify({ seconds, peakRssMiB: mib(process.resourceUsage().maxRSS), bytes: sink.bytes }));
}

/** The baseline: the export's rows by plain SQL, in the same keyset pages, into the same writer. */
async function baselineRole(url: string, project: number | null): Promise<void> {
  const start = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sink = discard();
  const xlsx = new XlsxStreamWriter({ sheetName: 'Tasks' });
  const finished = new Promise((resolve) => xlsx.output.pipe(sink).on('finish', resolve));
  const date = xlsx.numberFormat('yyyy-mm-dd');
  await xlsx.writeRow(HEADERS, { header: true });
  const labels: Record<string, string> = { 0: 'Normal', 1: 'Important', 2: 'Urgent' };
  let last = 0;
  let count = 0;
  for (;;) {
    const { rows } = await client.query<Record<string, any>>(
      `SELECT t.id, t.name, c.name AS assignee, t.deadline::text AS deadline, s.name AS stage, t.priority, t.planned_hours,
         t.effective_hours, t.remaining_hours, t.sequence, t.active
       FROM project_task t LEFT JOIN contact c ON c.id = t.assignee_id LEFT JOIN project_stage s ON s.id = t.stage_id
       WHERE t.id > $1 AND t.active AND ($2::int IS NULL OR t.project_id = $2) ORDER BY t.id LIMIT ${PAGE}`, [last, project]);
    for (const r of rows) {
      const room = xlsx.writeRow([r.name, r.assignee, r.deadline ? xlsx.date(r.deadline, date) : null, r.stage, labels[r.priority] ?? r.priority,
        r.planned_hours, r.effective_hours, r.remaining_hours, r.sequence, r.active]);
      if (room) await room;
    }
    count += rows.length;
    if (rows.length < PAGE) break;
    last = rows[rows.length - 1]!.id;
  }
  await xlsx.end();
  await finished;
  await client.end();
  const seconds = (performance.now() - start) / 1000;
  console.log(JSON.stringify({ seconds, peakRssMiB: mib(process.resourceUsage().maxRSS), bytes: sink.bytes, rows: count }));
}

function runRole(env: Record<string, string>): Record<string, number> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', SELF], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 20 });
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  if (run.status !== 0 || !line) throw new Error(`role ${JSON.stringify(env)} failed: ${run.stderr.slice(-800)}`);
  return JSON.parse(line) as Record<string, number>;
}

// ------------------------------------------------------------------------------------------------
// The FieldForge server, and its memory
// ------------------------------------------------------------------------------------------------

type Server = ServerProcess;

/** The FieldForge server of the benchmark (bench/fieldforge-server.ts) on `dbName`, in its own process. */
function startServer(dbName: string): Promise<Server> {
  return startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: dbName }, SERVER_NODE_ARGS);
}

const stopServer = stopServerProcess;


interface ExportRun {
  seconds: number;
  bytes: number;
  peakRssMiB: number;
  /** RSS (MiB) at each tenth of the bytes received. */
  rssAlong: number[];
  startRssMiB: number;
}

/** One export through HTTP, the body read to its end, the server's RSS sampled meanwhile. */
async function exportOnce(server: Server, headers: Record<string, string>, body: unknown, expectedBytes = 0): Promise<ExportRun> {
  const pid = server.child.pid!;
  const startRss = memoryOf(pid).rss;
  let peak = startRss;
  let bytes = 0;
  const along: number[] = [];
  const sampler = setInterval(() => {
    const { rss } = memoryOf(pid);
    if (rss > peak) peak = rss;
    if (expectedBytes && along.length < 10 && bytes >= (expectedBytes * (along.length + 1)) / 10) along.push(mib(rss));
  }, 20);
  const start = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/api/export/ProjectTask`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`export answered ${res.status}: ${(await res.text()).slice(0, 400)}`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - start) / 1000;
  return { seconds, bytes, peakRssMiB: mib(peak), rssAlong: along, startRssMiB: mib(startRss) };
}

// ------------------------------------------------------------------------------------------------
// Setup
// ------------------------------------------------------------------------------------------------

/** 1,000 contacts; 1,000,000 active tasks, the first 100,000 in project "Export 100k". Returns that project's id. */
async function seed(client: pg.Client): Promise<number> {
  const { rows: [admin] } = await client.query<{ uid: number; company: number }>(
    `SELECT u.id AS uid, u.company_id AS company FROM "user" u WHERE u.identifier = 'core.user_admin'`);
  await client.query('BEGIN');
  await client.query(`INSERT INTO contact (name, is_company, active, company_id, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Contact ' || lpad(g::text, 4, '0'), FALSE, TRUE, $2, now(), $1, now(), $1 FROM generate_series(1, ${CONTACTS}) g`, [admin!.uid, admin!.company]);
  const { rows: projects } = await client.query<{ id: number }>(`INSERT INTO project_project (name, active, color, created_date, created_by_id, updated_date, updated_by_id)
    VALUES ('Export 100k', TRUE, 1, now(), $1, now(), $1), ('Export rest', TRUE, 2, now(), $1, now(), $1) RETURNING id`, [admin!.uid]);
  await client.query(`WITH s AS (SELECT array_agg(id ORDER BY sequence, id) AS a FROM project_stage),
      c AS (SELECT array_agg(id ORDER BY id) AS a FROM contact)
    INSERT INTO project_task (name, project_id, stage_id, priority, deadline, assignee_id, sequence,
      planned_hours, effective_hours, remaining_hours, subtask_count, active, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Task ' || g, CASE WHEN g <= ${SMALL} THEN $2::int ELSE $3::int END, s.a[1 + g % array_length(s.a, 1)], (g % 3)::text,
      DATE '2026-01-01' + ((g::bigint * 7919) % 365)::int, c.a[1 + (g * 31) % array_length(c.a, 1)], 10,
      (g % 40)::float8, (g % 17)::float8, (g % 40 - g % 17)::float8, 0, TRUE, now(), $1, now(), $1
    FROM generate_series(1, ${LARGE}) g, s, c`, [admin!.uid, projects[0]!.id, projects[1]!.id]);
  await client.query('COMMIT');
  await client.query('ANALYZE');
  return projects[0]!.id;
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  log(`machine: ${availableParallelism()} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  log(`\n(c) XLSX writers, ${WRITER_ROWS.toLocaleString('en')} synthetic rows × 10 columns, each in its own process:`);
  for (const kind of ['exceljs', 'stream']) {
    const r = runRole({ BENCH_EXPORT_ROLE: 'writer', BENCH_WRITER: kind, BENCH_ROWS: String(WRITER_ROWS) });
    const name = kind === 'exceljs' ? 'exceljs 4.4.0 stream.xlsx.WorkbookWriter' : 'inline strings + zip-stream.ts (FieldForge)';
    console.log(`  ${name.padEnd(44)} ${r.seconds!.toFixed(2).padStart(6)} s   peak RSS ${String(r.peakRssMiB).padStart(4)} MiB   ${(r.bytes! / 1048576).toFixed(1)} MiB file`);
  }

  const dbName = `ffbench_export_${randomBytes(4).toString('hex')}`;
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
    log(`\ncreating ${dbName} (contacts, project)…`);
    const key = await createBenchDatabase(engine, dbName, ['contacts', 'project'], 'export benchmark');
    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    log(`seeding ${LARGE.toLocaleString('en')} tasks…`);
    const project = await seed(client);
    server = await startServer(dbName);
    const started = memoryOf(server.child.pid!).rss;
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    const small = { fields: FIELDS, filter_str: `Q(project=${project})` };
    // Warm-up: the registry, the credential, the plans.
    await exportOnce(server, headers, { ...small, filter_str: `Q(project=${project}) & Q(id__lt=2000)` });

    // Interleaved rounds (other work on the machine then weighs on both alike); medians printed.
    const ffRuns: ExportRun[] = [];
    const baseRuns: Record<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ffRuns.push(await exportOnce(server, headers, small));
      baseRuns.push(runRole({ BENCH_EXPORT_ROLE: 'baseline', BENCH_URL: databaseUrl(dbName), BENCH_PROJECT: String(project) }));
    }
    const ff = { ...ffRuns[0]!, seconds: median(ffRuns.map((r) => r.seconds)), peakRssMiB: Math.max(...ffRuns.map((r) => r.peakRssMiB)) };
    const base = { seconds: median(baseRuns.map((r) => r.seconds!)), peakRssMiB: Math.max(...baseRuns.map((r) => r.peakRssMiB!)) };
    console.log(`\n(a) ${SMALL.toLocaleString('en')} tasks × ${FIELDS.length} columns (assignee name, deadline date, stage name, priority label…), median of ${ROUNDS}`);
    console.log(`  FieldForge POST /api/export        ${ff.seconds.toFixed(2).padStart(6)} s   server peak RSS ${String(ff.peakRssMiB).padStart(4)} MiB (idle before: ${ff.startRssMiB})   ${(ff.bytes / 1048576).toFixed(1)} MiB   target ≤ 3 s, ≤ 250 MiB`);
    console.log(`    each round: ${ffRuns.map((r) => r.seconds.toFixed(2)).join(' ')} s`);
    console.log(`  baseline: pg keyset pages → writer ${base.seconds.toFixed(2).padStart(6)} s   process peak RSS ${String(base.peakRssMiB).padStart(4)} MiB`);
    console.log(`  FieldForge / baseline time: ${(ff.seconds / base.seconds).toFixed(2)}×; server RSS right after start (no request yet): ${mib(started)} MiB`);

    const large = await exportOnce(server, headers, { fields: FIELDS }, ff.bytes * (LARGE / SMALL));
    const baseLarge = runRole({ BENCH_EXPORT_ROLE: 'baseline', BENCH_URL: databaseUrl(dbName), BENCH_PROJECT: '' });
    console.log(`\n(b) ${LARGE.toLocaleString('en')} tasks, same columns`);
    console.log(`  FieldForge POST /api/export        ${large.seconds.toFixed(2).padStart(6)} s   server peak RSS ${String(large.peakRssMiB).padStart(4)} MiB   ${(large.bytes / 1048576).toFixed(1)} MiB`);
    console.log(`  server RSS (MiB) at each tenth of the download: ${large.rssAlong.join(' ')}`);
    console.log(`  growth over (a)'s peak: ${large.peakRssMiB - ff.peakRssMiB} MiB`);
    console.log(`  baseline: pg keyset pages → writer ${baseLarge.seconds!.toFixed(2).padStart(6)} s   process peak RSS ${String(baseLarge.peakRssMiB).padStart(4)} MiB`);
  } finally {
    await cleanup();
  }
}

const role = process.env.BENCH_EXPORT_ROLE;
const work = role === 'writer'
  ? writerRole(process.env.BENCH_WRITER ?? 'stream', Number(process.env.BENCH_ROWS ?? SMALL))
  : role === 'baseline'
    ? baselineRole(process.env.BENCH_URL!, process.env.BENCH_PROJECT ? Number(process.env.BENCH_PROJECT) : null)
    : main();
work.catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
