/**
 * `BENCH_ONLY=bulk npm run bench`: the bulk routes (issue 11 item 8) through real HTTP against a
 * FieldForge server in its own process (bench/fieldforge-server.ts, the administrator's API key),
 * each case beside a bare baseline measured in the same run on the same database through `pg`:
 *
 * (a) bulk-create of 1,000 tasks (name, project, stage, assignee, deadline, hours, priority) →
 *     rows/s. Baseline: one multi-row `INSERT … VALUES (…), (…) RETURNING id` of the same rows
 *     (remaining hours computed by the client). Target ≥ 0.3.
 * (b) bulk-update of 10,000 tasks by a selection (`Q(project=…)`, priority and deadline) → rows/s.
 *     Baseline: one `UPDATE … WHERE project_id = $1`. Target ≥ 0.5. A second line writes
 *     `planned_hours` instead, whose stored `remaining_hours` FieldForge recomputes (loads the
 *     10,000 records and writes what changed); its baseline computes it in the same UPDATE.
 * (c) clone of 100 orders with 10 lines each → orders/s. Baseline: the same copy in bare SQL (ids
 *     taken from the sequence, one INSERT … SELECT for the orders, one for the lines, one UPDATE for
 *     the references), in one transaction. No target: printed for the README.
 *
 * Each case runs a warm-up, then BENCH_ROUNDS (default 5) rounds alternating FieldForge and the
 * baseline; the median time is printed with the SQL statements FieldForge ran per call.
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_ROUNDS,
 * BENCH_KEEP=1 (keep the database). Not a test: it prints and never fails CI.
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
const CREATE_ROWS = 1_000;
const UPDATE_ROWS = 10_000;
const CLONE_ORDERS = 100;
const LINES_PER_ORDER = 10;

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

/** A FieldForge call that must answer 200, with the SQL statements the server ran for it. */
async function ffCall(server: Server, headers: Record<string, string>, method: string, path: string, body: unknown): Promise<{ json: any; statements: number }> {
  const before = await statementCount(server);
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method, headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 400)}`);
  return { json: JSON.parse(text), statements: (await statementCount(server)) - before };
}

async function statementCount(server: Server): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${server.port}/__cpu`);
  return ((await res.json()) as { statements: number }).statements;
}

// ------------------------------------------------------------------------------------------------
// Cases
// ------------------------------------------------------------------------------------------------

interface Seeded {
  uid: number;
  projects: number[];
  stages: number[];
  contacts: number[];
  /** The project holding the 10,000 tasks of case (b). */
  updateProject: number;
  /** The 100 orders of case (c). */
  orders: number[];
}

interface CaseResult {
  key: string;
  title: string;
  unit: string;
  /** Records per call (rows/s = records / seconds). */
  records: number;
  ffMs: number[];
  bareMs: number[];
  statements: number;
  target: number | null;
}

function taskRow(seeded: Seeded, round: number, i: number) {
  return {
    name: `Bulk ${round}-${i}`, project: seeded.projects[i % seeded.projects.length], stage: seeded.stages[i % seeded.stages.length],
    assignee: seeded.contacts[i % seeded.contacts.length], deadline: `2026-${String(1 + (i % 12)).padStart(2, '0')}-15`,
    planned_hours: i % 40, effective_hours: i % 17, priority: String(i % 3),
  };
}

/** (a) Bare: one multi-row INSERT of the same rows. */
async function bareInsert(client: pg.Client, seeded: Seeded, round: number): Promise<number> {
  const cols = ['name', 'project_id', 'stage_id', 'assignee_id', 'deadline', 'planned_hours', 'effective_hours', 'remaining_hours',
    'priority', 'sequence', 'subtask_count', 'active', 'created_date', 'created_by_id', 'updated_date', 'updated_by_id'];
  const params: unknown[] = [];
  const rows: string[] = [];
  const now = new Date().toISOString();
  for (let i = 0; i < CREATE_ROWS; i++) {
    const r = taskRow(seeded, round, i);
    const values = [r.name, r.project, r.stage, r.assignee, r.deadline, r.planned_hours, r.effective_hours, r.planned_hours - r.effective_hours,
      r.priority, 10, 0, true, now, seeded.uid, now, seeded.uid];
    rows.push(`(${values.map((v) => { params.push(v); return `$${params.length}`; }).join(', ')})`);
  }
  const res = await client.query(`INSERT INTO project_task (${cols.join(', ')}) VALUES ${rows.join(', ')} RETURNING id`, params);
  return res.rowCount ?? 0;
}

/** (c) Bare: the same copy of orders and lines in SQL, in one transaction. */
async function bareClone(client: pg.Client, seeded: Seeded): Promise<number> {
  await client.query('BEGIN');
  const { rows: map } = await client.query<{ old: number; new: number }>(
    `SELECT id AS old, nextval(pg_get_serial_sequence('sale_order', 'id'))::int AS new FROM sale_order WHERE id = ANY($1::int[]) ORDER BY id`,
    [seeded.orders]);
  const olds = map.map((m) => m.old);
  const news = map.map((m) => m.new);
  const orderCols = ['customer_id', 'date_order', 'user_id', 'company_id', 'currency_id', 'stage_id', 'note', 'amount_total',
    'currency_rate', 'company_currency_id', 'amount_total_company'];
  await client.query(`INSERT INTO sale_order (id, name, ${orderCols.join(', ')}, created_date, created_by_id, updated_date, updated_by_id)
    SELECT m.new, 'S' || lpad(m.new::text, 5, '0'), ${orderCols.map((c) => `o.${c}`).join(', ')}, now(), $3, now(), $3
    FROM unnest($1::int[], $2::int[]) AS m(old, new) JOIN sale_order o ON o.id = m.old`, [olds, news, seeded.uid]);
  const lineCols = ['sequence', 'product_id', 'name', 'quantity', 'uom_id', 'price_unit', 'product_qty', 'currency_id', 'company_id', 'subtotal'];
  const lines = await client.query(`INSERT INTO sale_order_line (order_id, ${lineCols.join(', ')}, created_date, created_by_id, updated_date, updated_by_id)
    SELECT m.new, ${lineCols.map((c) => `l.${c}`).join(', ')}, now(), $3, now(), $3
    FROM unnest($1::int[], $2::int[]) AS m(old, new) JOIN sale_order_line l ON l.order_id = m.old ORDER BY m.new, l.sequence, l.id`,
  [olds, news, seeded.uid]);
  await client.query('COMMIT');
  if (lines.rowCount !== CLONE_ORDERS * LINES_PER_ORDER) throw new Error(`bare clone copied ${lines.rowCount} lines`);
  return map.length;
}

async function runCases(server: Server, client: pg.Client, seeded: Seeded, headers: Record<string, string>): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const measure = async (
    key: string, title: string, unit: string, records: number, target: number | null,
    ff: (round: number) => Promise<{ statements: number }>, bare: (round: number) => Promise<void>,
  ) => {
    log(`  (${key}) ${title}: warm-up`);
    await ff(0);
    await bare(0);
    const out: CaseResult = { key, title, unit, records, ffMs: [], bareMs: [], statements: 0, target };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternating which goes first, so that whatever else loads the machine weighs on both.
      const order = round % 2 ? ['ff', 'bare'] : ['bare', 'ff'];
      for (const who of order) {
        // Every measured call starts from the same table state: the dead rows the previous write
        // left (10,000 per update) are vacuumed first, not counted against whoever came second.
        await client.query('VACUUM project_task, sale_order, sale_order_line');
        if (who === 'ff') {
          const { ms, value } = await timed(() => ff(round));
          out.ffMs.push(ms);
          out.statements = value.statements;
        } else {
          out.bareMs.push((await timed(() => bare(round))).ms);
        }
      }
      log(`  (${key}) round ${round}: FieldForge ${out.ffMs.at(-1)!.toFixed(0)} ms, bare ${out.bareMs.at(-1)!.toFixed(0)} ms`);
    }
    results.push(out);
  };

  await measure('a', `bulk-create of ${CREATE_ROWS.toLocaleString('en')} tasks`, 'rows/s', CREATE_ROWS, 0.3, async (round) => {
    const res = await ffCall(server, headers, 'POST', '/api/bulk-create/ProjectTask', Array.from({ length: CREATE_ROWS }, (_, i) => taskRow(seeded, round, i)));
    if (res.json.length !== CREATE_ROWS) throw new Error(`(a) FieldForge created ${res.json.length} tasks`);
    return res;
  }, async (round) => {
    const n = await bareInsert(client, seeded, round);
    if (n !== CREATE_ROWS) throw new Error(`(a) bare inserted ${n} rows`);
  });

  const selection = { filter_str: `Q(project=${seeded.updateProject})` };
  await measure('b', `bulk-update of ${UPDATE_ROWS.toLocaleString('en')} tasks by a selection (priority, deadline)`, 'rows/s', UPDATE_ROWS, 0.5, async (round) => {
    const res = await ffCall(server, headers, 'PUT', '/api/bulk-update/ProjectTask', {
      selection, vals: { priority: String(round % 3), deadline: `2027-01-${String(1 + (round % 28)).padStart(2, '0')}` },
    });
    if (res.json.updated !== UPDATE_ROWS) throw new Error(`(b) FieldForge updated ${res.json.updated} tasks`);
    return res;
  }, async (round) => {
    const res = await client.query(`UPDATE project_task SET priority = $1, deadline = $2, updated_date = now(), updated_by_id = $3
      WHERE project_id = $4 AND active`, [String((round + 1) % 3), `2027-02-${String(1 + (round % 28)).padStart(2, '0')}`, seeded.uid, seeded.updateProject]);
    if (res.rowCount !== UPDATE_ROWS) throw new Error(`(b) bare updated ${res.rowCount} rows`);
  });

  await measure('b2', `bulk-update of ${UPDATE_ROWS.toLocaleString('en')} tasks by a selection (planned_hours → remaining_hours recomputed)`, 'rows/s', UPDATE_ROWS, null, async (round) => {
    const res = await ffCall(server, headers, 'PUT', '/api/bulk-update/ProjectTask', { selection, vals: { planned_hours: 50 + round } });
    if (res.json.updated !== UPDATE_ROWS) throw new Error(`(b2) FieldForge updated ${res.json.updated} tasks`);
    return res;
  }, async (round) => {
    const res = await client.query(`UPDATE project_task SET planned_hours = $1, remaining_hours = $1 - effective_hours, updated_date = now(),
      updated_by_id = $2 WHERE project_id = $3 AND active`, [80 + round, seeded.uid, seeded.updateProject]);
    if (res.rowCount !== UPDATE_ROWS) throw new Error(`(b2) bare updated ${res.rowCount} rows`);
  });

  await measure('c', `clone of ${CLONE_ORDERS} orders with ${LINES_PER_ORDER} lines each`, 'orders/s', CLONE_ORDERS, null, async () => {
    const res = await ffCall(server, headers, 'POST', '/api/clone/SaleOrder', { ids: seeded.orders });
    if (res.json.length !== CLONE_ORDERS) throw new Error(`(c) FieldForge cloned ${res.json.length} orders`);
    return res;
  }, async () => {
    const n = await bareClone(client, seeded);
    if (n !== CLONE_ORDERS) throw new Error(`(c) bare cloned ${n} orders`);
  });
  return results;
}

// ------------------------------------------------------------------------------------------------
// Setup and report
// ------------------------------------------------------------------------------------------------

async function seed(client: pg.Client, server: Server, headers: Record<string, string>): Promise<Seeded> {
  const { rows: [admin] } = await client.query<{ uid: number }>(`SELECT id AS uid FROM "user" WHERE identifier = 'core.user_admin'`);
  const uid = admin!.uid;
  await client.query(`INSERT INTO contact (name, active, is_company, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Contact ' || g, TRUE, FALSE, now(), $1, now(), $1 FROM generate_series(1, 100) g`, [uid]);
  await client.query(`INSERT INTO project_project (name, active, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Project ' || g, TRUE, 0, now(), $1, now(), $1 FROM generate_series(1, 11) g`, [uid]);
  const ids = async (text: string) => (await client.query<{ id: number }>(text)).rows.map((r) => r.id);
  const projects = await ids('SELECT id FROM project_project ORDER BY id');
  const updateProject = projects.pop()!;
  const stages = await ids('SELECT id FROM project_stage ORDER BY sequence, id');
  const contacts = await ids('SELECT id FROM contact ORDER BY id');
  // The 10,000 tasks of case (b), in a project of their own.
  await client.query(`INSERT INTO project_task (name, project_id, stage_id, priority, sequence, planned_hours, effective_hours,
      remaining_hours, subtask_count, active, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Update ' || g, $2, $3, '0', 10, 10, (g % 7)::float8, 10 - (g % 7), 0, TRUE, now(), $1, now(), $1
    FROM generate_series(1, ${UPDATE_ROWS}) g`, [uid, updateProject, stages[0]]);
  await client.query('ANALYZE');
  // The orders of case (c), made through FieldForge (prices, subtotals and totals as it computes them).
  const products = (await ffCall(server, headers, 'POST', '/api/bulk-create/Product',
    Array.from({ length: LINES_PER_ORDER }, (_, i) => ({ name: `Product ${i}`, list_price: 1.5 + i })))).json.map((r: { id: number }) => r.id);
  const orders = (await ffCall(server, headers, 'POST', '/api/bulk-create/SaleOrder', Array.from({ length: CLONE_ORDERS }, (_, i) => ({
    customer: contacts[i % contacts.length], note: `Order ${i}`,
    order_lines: products.map((product: number, j: number) => ({ product, quantity: 1 + ((i + j) % 5), sequence: j })),
  })))).json.map((r: { id: number }) => r.id);
  return { uid, projects, stages, contacts, updateProject, orders };
}

function report(results: CaseResult[]): void {
  const out: string[] = [];
  out.push('');
  out.push(`Bulk routes: FieldForge through HTTP (its own process, API key) vs bare SQL through pg, same database, same run;`);
  out.push(`median of ${ROUNDS} rounds after a warm-up; ${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}.`);
  out.push('');
  const header = ['case', 'FieldForge ms', 'bare ms', 'FieldForge', 'bare', 'ratio', 'target', 'statements/call'];
  const rows = results.map((r) => {
    const ff = median(r.ffMs);
    const bare = median(r.bareMs);
    const rate = (ms: number) => `${Math.round(r.records / (ms / 1000)).toLocaleString('en')} ${r.unit}`;
    const ratio = bare / ff;
    const verdict = r.target === null ? '—' : `≥ ${r.target} ${ratio >= r.target ? 'met' : 'MISSED'}`;
    return [`(${r.key}) ${r.title}`, ff.toFixed(0), bare.toFixed(0), rate(ff), rate(bare), ratio.toFixed(2), verdict, String(r.statements)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  out.push(line(header));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) out.push(line(r));
  out.push('');
  out.push('ratio = FieldForge rows/s ÷ bare rows/s (bare ms ÷ FieldForge ms).');
  console.log(out.join('\n'));
}

async function main(): Promise<void> {
  const dbName = `ffbench_bulk_${randomBytes(4).toString('hex')}`;
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
    log(`creating ${dbName} (contacts, project, sales)…`);
    const key = await createBenchDatabase(engine, dbName, ['contacts', 'project', 'sales'], 'bulk benchmark');
    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    server = await startServer(dbName);
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    log('seeding…');
    const seeded = await seed(client, server, headers);
    report(await runCases(server, client, seeded, headers));
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
