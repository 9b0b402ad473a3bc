/**
 * `BENCH_ONLY=resequence npm run bench`: resequence of 10,000 tasks (issue 13 item 6) through real
 * HTTP against a FieldForge server in its own process (bench/fieldforge-server.ts, the
 * administrator's API key), beside a bare baseline measured in the same run on the same database
 * through `pg`.
 *
 * Each FieldForge call drops the scope's first task after its last one, so every one of the
 * 10,000 numbers changes (the worst case: each row is written). Baseline: the same renumbering
 * UPDATE sent straight through `pg` — `UPDATE project_task SET sequence = v.seq, updated_date,
 * updated_by FROM unnest($ids, $seqs) …` — on a project of its own holding as many tasks, the
 * new order computed by the client. FieldForge also reads the scope, checks it and answers the
 * ids; the ratio shows what that costs. The SQL statements of a FieldForge call are traced and
 * printed (one UPDATE).
 *
 * Each case runs a warm-up, then BENCH_ROUNDS (default 5) rounds alternating which goes first;
 * the median is printed. Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local
 * server), BENCH_ROUNDS, BENCH_KEEP=1 (keep the database). Not a test: prints, never fails CI.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';
import { median, timed } from './bench-measures.js';
import { BENCH_BASE_URL, createBenchDatabase, databaseUrl } from './bench-database.js';

const BASE_URL = BENCH_BASE_URL;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const KEEP = process.env.BENCH_KEEP === '1';
const ROWS = 10_000;

const log = (msg: string) => process.stderr.write(`${msg}\n`);

type Server = ServerProcess;

/** The FieldForge server of the benchmark (bench/fieldforge-server.ts) on `dbName`, in its own process. */
function startServer(dbName: string): Promise<Server> {
  return startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: dbName });
}

const stopServer = stopServerProcess;

async function post(server: Server, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 400)}`);
  return JSON.parse(text);
}

/** `count` tasks numbered 1..count in a new project; their ids in list order. */
async function seedProject(client: pg.Client, uid: number, name: string, count: number): Promise<{ project: number; ids: number[] }> {
  const { rows: [row] } = await client.query<{ id: number }>(`INSERT INTO project_project (name, active, color, created_date, created_by_id,
    updated_date, updated_by_id) VALUES ($1, TRUE, 0, now(), $2, now(), $2) RETURNING id`, [name, uid]);
  const project = row!.id;
  const { rows } = await client.query<{ id: number }>(`INSERT INTO project_task (name, project_id, priority, sequence, planned_hours,
      effective_hours, remaining_hours, subtask_count, active, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Reseq ' || g, $2, '0', g, 0, 0, 0, 0, TRUE, now(), $1, now(), $1 FROM generate_series(1, ${count}) g ORDER BY g RETURNING id`, [uid, project]);
  return { project, ids: rows.map((r) => r.id) };
}

async function main(): Promise<void> {
  const dbName = `ffbench_reseq_${randomBytes(4).toString('hex')}`;
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
    const key = await createBenchDatabase(engine, dbName, ['contacts', 'project'], 'resequence benchmark');
    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    const { rows: [admin] } = await client.query<{ uid: number }>(`SELECT id AS uid FROM "user" WHERE identifier = 'core.user_admin'`);
    const uid = admin!.uid;
    const ff = await seedProject(client, uid, 'Resequence FieldForge', ROWS);
    const bare = await seedProject(client, uid, 'Resequence bare', ROWS);
    await client.query('ANALYZE');
    server = await startServer(dbName);
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };

    let ffOrder = ff.ids;
    let bareOrder = bare.ids;
    const ffCall = async () => {
      const ids: number[] = (await post(server!, `/api/resequence/ProjectTask`, headers, {
        dropped_column_id: ffOrder[0], after_column_id: ffOrder.at(-1), scope_filter: `Q(project=${ff.project})`,
      })).ids;
      if (ids.length !== ROWS || ids.at(-1) !== ffOrder[0]) throw new Error('FieldForge answered another order');
      ffOrder = ids;
    };
    const bareCall = async () => {
      bareOrder = [...bareOrder.slice(1), bareOrder[0]!];
      const res = await client!.query(`UPDATE project_task SET sequence = v.seq, updated_date = now(), updated_by_id = $3
        FROM unnest($1::int[], $2::int[]) AS v(id, seq) WHERE project_task.id = v.id`, [bareOrder, bareOrder.map((_, i) => i + 1), uid]);
      if (res.rowCount !== ROWS) throw new Error(`bare updated ${res.rowCount} rows`);
    };

    log('warm-up…');
    await ffCall();
    await bareCall();
    await post(server, '/__trace/start', {});
    await ffCall();
    const { statements } = await post(server, '/__trace/stop', {}) as { statements: string[] };
    const ffMs: number[] = [];
    const bareMs: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const who of round % 2 ? ['ff', 'bare'] : ['bare', 'ff']) {
        // Each call leaves 10,000 dead rows: vacuumed first, not counted against whoever comes second.
        await client.query('VACUUM project_task');
        if (who === 'ff') ffMs.push((await timed(ffCall)).ms);
        else bareMs.push((await timed(bareCall)).ms);
      }
      log(`  round ${round}: FieldForge ${ffMs.at(-1)!.toFixed(1)} ms, bare ${bareMs.at(-1)!.toFixed(1)} ms`);
    }
    const kinds = statements.map((s) => s.trim().split(/\s+/)[0]!.toUpperCase());
    const updates = kinds.filter((k) => k === 'UPDATE').length;
    console.log([
      '',
      `Resequence of ${ROWS.toLocaleString('en')} tasks (every number changes): FieldForge through HTTP (its own process, API key)`,
      `vs the same UPDATE through pg, same database, same run; median of ${ROUNDS} rounds after a warm-up;`,
      `${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}.`,
      '',
      `FieldForge: ${median(ffMs).toFixed(1)} ms per call (${statements.length} statements: ${kinds.join(', ')}; ${updates} UPDATE)`,
      `bare UPDATE: ${median(bareMs).toFixed(1)} ms`,
      `ratio (bare ms ÷ FieldForge ms): ${(median(bareMs) / median(ffMs)).toFixed(2)}`,
    ].join('\n'));
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
