/**
 * `BENCH_ONLY=effects npm run bench`: form effects (`POST /api/ui-effect/SaleOrderLine`, CONTRACTS
 * C1) through real HTTP against a FieldForge server in its own process (bench/fieldforge-server.ts,
 * the administrator's API key), under load from autocannon, beside a bare baseline measured in the
 * same run on the same database: a minimal `node:http` + `pg` server (bench/bare-effects-server.ts)
 * answering the same question by hand with one parameterised SQL statement — the product's name,
 * unit and list price, the order's other lines' subtotals —, computing the subtotal and the order's
 * total and answering the same JSON. The two answers are compared before measuring.
 *
 * The data: 20 products, 50 orders of 10 lines each, made through FieldForge (prices, subtotals and
 * totals as it computes them); every request picks one of the 50 orders at random.
 *
 * (1) a new line choosing a product: `{vals: {order, product, quantity}, field_name: 'product'}` →
 *     the line's description, unit, price, subtotal… and the order's total with the line added.
 * (2) a saved line changing its quantity: `{id, vals: {quantity}, field_name: 'quantity'}` → its
 *     subtotal and the order's total.
 *
 * Each case: a warm-up per server, then BENCH_DURATION seconds (default 5) of load per server with
 * BENCH_CONNECTIONS connections (default 10), in BENCH_ROUNDS interleaved runs (default 2, A B B A…,
 * so other load on the machine weighs on both alike). Printed as a markdown table: req/s of each
 * server (2xx answers per second), their ratio FieldForge ÷ bare, FieldForge's median latency and
 * the SQL statements FieldForge ran per call (its `/__cpu` statement count over the requests it
 * served; the bare server runs 1). Nothing is written by either server: a ui-effect call is
 * read-only, so every request sees the same database.
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_DURATION,
 * BENCH_ROUNDS, BENCH_WARMUP (seconds per server, default 2), BENCH_CONNECTIONS, BENCH_SQL=1 (print the
 * statements of one FieldForge call per case), BENCH_KEEP=1 (keep the database). Not a test: it
 * prints, and always exits 0 (a problem is printed instead).
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import autocannon, { type AutocannonInstance, type AutocannonRequest } from 'autocannon';
import pg from 'pg';
import { createServiceAccountKey, hashApiKey } from '../src/auth/api-keys.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { createDatabase } from '../src/platform/database-lifecycle.js';
import { Platform } from '../src/platform/platform.js';
import { benchRun, call, log, percentile } from './api-load.js';
import { BENCH_BASE_URL, databaseUrl } from './bench-database.js';
import { startServerProcess } from './server-process.js';

const BASE_URL = BENCH_BASE_URL;
const DURATION = positive(process.env.BENCH_DURATION, 5);
const ROUNDS = Math.max(1, Math.round(positive(process.env.BENCH_ROUNDS, 2)));
const WARMUP = Math.max(0, Number(process.env.BENCH_WARMUP ?? 2) || 0);
const CONNECTIONS = Math.max(1, Math.round(positive(process.env.BENCH_CONNECTIONS, 10)));
const SHOW_SQL = process.env.BENCH_SQL === '1';
const PRODUCTS = 20;
const ORDERS = 50;
const LINES_PER_ORDER = 10;
const PATH = '/api/ui-effect/SaleOrderLine';

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : fallback;
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

// ------------------------------------------------------------------------------------------------
// Servers (each in its own process: the CPU of the load generator is not theirs)
// ------------------------------------------------------------------------------------------------

type ServerKey = 'fieldforge' | 'bare';

interface Server {
  key: ServerKey;
  child: ChildProcess;
  port: number;
}

async function startServer(key: ServerKey, env: Record<string, string>): Promise<Server> {
  const { child, port } = await startServerProcess(key === 'fieldforge' ? 'bench/fieldforge-server.ts' : 'bench/bare-effects-server.ts', env);
  return { key, child, port };
}

/** A FieldForge call that must answer 200. */
async function ffCall(server: Server, headers: Record<string, string>, method: string, path: string, body: unknown): Promise<any> {
  const res = await call(server, method, path, headers, body);
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 400)}`);
  return res.json;
}

// ------------------------------------------------------------------------------------------------
// Data and cases
// ------------------------------------------------------------------------------------------------

interface Seeded {
  products: number[];
  orders: number[];
  /** The first line of each order (same index as `orders`), and its quantity. */
  lines: { id: number; quantity: number }[];
}

async function seed(ff: Server, headers: Record<string, string>, client: pg.Client): Promise<Seeded> {
  const customer = (await ffCall(ff, headers, 'POST', '/api/create/Contact', { name: 'Effects Bench Customer', is_company: true })).id as number;
  const products = ((await ffCall(ff, headers, 'POST', '/api/bulk-create/Product',
    Array.from({ length: PRODUCTS }, (_, i) => ({ name: `Bench Product ${String(i + 1).padStart(2, '0')}`, list_price: Number((3.75 + i * 1.15).toFixed(2)) })),
  )) as { id: number }[]).map((r) => r.id);
  const orders = ((await ffCall(ff, headers, 'POST', '/api/bulk-create/SaleOrder', Array.from({ length: ORDERS }, (_, i) => ({
    customer, note: `Effects bench order ${i}`,
    order_lines: Array.from({ length: LINES_PER_ORDER }, (_, j) => ({
      product: products[(i + j) % products.length], quantity: 1 + ((i + j) % 5), sequence: 10 * (j + 1),
    })),
  })))) as { id: number }[]).map((r) => r.id);
  const { rows } = await client.query<{ order_id: number; id: number; quantity: number }>(
    `SELECT DISTINCT ON (order_id) order_id, id, quantity FROM sale_order_line WHERE order_id = ANY($1::int[]) ORDER BY order_id, sequence, id`, [orders]);
  const byOrder = new Map(rows.map((r) => [r.order_id, { id: r.id, quantity: Number(r.quantity) }]));
  const lines = orders.map((o) => {
    const line = byOrder.get(o);
    if (!line) throw new Error(`order ${o} has no line`);
    return line;
  });
  await client.query('ANALYZE');
  return { products, orders, lines };
}

interface BenchCase {
  key: string;
  title: string;
  /** A request body for one of the orders (index into `seeded.orders`). */
  body(i: number): Record<string, unknown>;
}

function cases(seeded: Seeded): BenchCase[] {
  return [
    {
      key: '1', title: 'new line chooses a product',
      body: (i) => ({ vals: { order: seeded.orders[i], product: seeded.products[(i * 7 + 3) % seeded.products.length], quantity: 3 }, field_name: 'product' }),
    },
    {
      key: '2', title: 'saved line changes quantity',
      // Another quantity than the stored one (1 to 5): subtotal and total change.
      body: (i) => ({ id: seeded.lines[i]!.id, vals: { quantity: seeded.lines[i]!.quantity + 6 }, field_name: 'quantity' }),
    },
  ];
}

function request(c: BenchCase, seeded: Seeded, headers: Record<string, string>): AutocannonRequest {
  return {
    method: 'POST', path: PATH, headers, body: JSON.stringify(c.body(0)),
    setupRequest: (req) => ({ ...req, body: JSON.stringify(c.body(Math.floor(Math.random() * seeded.orders.length))) }),
  };
}

// ------------------------------------------------------------------------------------------------
// Measuring
// ------------------------------------------------------------------------------------------------

interface Measured {
  responses: number;
  seconds: number;
  errors: number;
  latencies: number[];
  served: number;
  statements: number;
}

let currentJob: AutocannonInstance | null = null;

/** One autocannon run; resolves once the requests still in flight when it stops are answered. */
async function load(server: Server, req: AutocannonRequest, seconds: number, latencies?: number[]): Promise<{ responses: number; errors: number; seconds: number }> {
  const t0 = performance.now();
  const job = autocannon({ url: `http://127.0.0.1:${server.port}`, connections: CONNECTIONS, duration: seconds, requests: [req] });
  currentJob = job;
  if (latencies) job.on('response', (_client, status, _bytes, ms) => { if (status === 200) latencies.push(ms); });
  const result = await job;
  currentJob = null;
  const elapsed = (performance.now() - t0) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { responses: result['2xx'], errors: result.errors + result.timeouts + result.non2xx, seconds: elapsed };
}

async function counters(server: Server): Promise<{ statements: number; served: number }> {
  return (await call(server, 'GET', '/__cpu')).json as { statements: number; served: number };
}

async function measureCase(c: BenchCase, seeded: Seeded, headers: Record<string, string>, ff: Server, bare: Server): Promise<Record<ServerKey, Measured>> {
  const req = request(c, seeded, headers);
  if (WARMUP > 0) for (const s of [ff, bare]) await load(s, req, WARMUP);
  const out: Record<ServerKey, Measured> = {
    fieldforge: { responses: 0, seconds: 0, errors: 0, latencies: [], served: 0, statements: 0 },
    bare: { responses: 0, seconds: 0, errors: 0, latencies: [], served: 0, statements: 0 },
  };
  for (let i = 0; i < ROUNDS; i++) {
    for (const s of i % 2 === 0 ? [ff, bare] : [bare, ff]) {
      const m = out[s.key];
      const before = await counters(s);
      const run = await load(s, req, DURATION / ROUNDS, m.latencies);
      const after = await counters(s);
      m.responses += run.responses;
      m.errors += run.errors;
      m.seconds += run.seconds;
      m.served += after.served - before.served;
      m.statements += after.statements - before.statements;
      log(`  (${c.key}) ${s.key === 'fieldforge' ? 'FieldForge' : 'bare'} run ${i + 1}: ${(run.responses / run.seconds).toFixed(0)} req/s${run.errors ? `, ${run.errors} errors` : ''}`);
    }
  }
  return out;
}

/** One call of each server on the same body: the answers must be the same; FieldForge's statements traced. */
async function check(c: BenchCase, headers: Record<string, string>, ff: Server, bare: Server): Promise<{ note: string; statements: string[] }> {
  const body = c.body(0);
  await call(ff, 'POST', PATH, headers, body); // the key is remembered from here on
  await call(ff, 'POST', '/__trace/start');
  const a = await call(ff, 'POST', PATH, headers, body);
  const { statements } = (await call(ff, 'POST', '/__trace/stop')).json as { statements: string[] };
  const b = await call(bare, 'POST', PATH, headers, body);
  if (a.status !== 200) throw new Error(`FieldForge answered ${a.status}: ${JSON.stringify(a.json).slice(0, 400)}`);
  if (b.status !== 200) throw new Error(`the bare server answered ${b.status}: ${JSON.stringify(b.json).slice(0, 400)}`);
  const note = isDeepStrictEqual(a.json, b.json)
    ? `identical answers: ${JSON.stringify(a.json)}`
    : `ANSWERS DIFFER\n      FieldForge: ${JSON.stringify(a.json)}\n      bare:       ${JSON.stringify(b.json)}`;
  return { note, statements };
}

// ------------------------------------------------------------------------------------------------
// Report
// ------------------------------------------------------------------------------------------------

interface CaseOutcome {
  c: BenchCase;
  result?: Record<ServerKey, Measured>;
  oneCall?: number;
  /** The two servers answered the checked request differently (measured all the same). */
  differ?: boolean;
  problem?: string;
}

function report(outcomes: CaseOutcome[], dbName: string, elapsed: number): void {
  const out: string[] = [''];
  out.push(`Form effects (POST ${PATH}): FieldForge through HTTP (its own process, API key) vs a bare node:http + pg`);
  out.push(`server answering the same JSON (one prepared statement, key checked in memory), same database, same run;`);
  out.push(`${ORDERS} orders × ${LINES_PER_ORDER} lines, ${CONNECTIONS} connections, ${DURATION} s of load per case and server in ${ROUNDS}`);
  out.push(`interleaved run(s) after a ${WARMUP} s warm-up; ${availableParallelism()} CPUs shared by PostgreSQL, both servers and the load`);
  out.push(`generator; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; database ${dbName}.`);
  out.push('');
  out.push('| case | FieldForge req/s | bare req/s | ratio | FieldForge p50 ms | statements/call |');
  out.push('|---|---:|---:|---:|---:|---:|');
  const notes: string[] = [];
  for (const { c, result, oneCall, differ, problem } of outcomes) {
    if (differ) notes.push(`(${c.key}) WARNING: the two servers answered the checked request differently (see above)`);
    const label = `(${c.key}) ${c.title}`;
    if (!result) {
      out.push(`| ${label} | n/a | n/a | n/a | n/a | ${oneCall ?? 'n/a'} |`);
      notes.push(`(${c.key}) not measured: ${problem ?? 'unknown problem'}`);
      continue;
    }
    const { fieldforge: ff, bare } = result;
    const rate = (m: Measured) => (m.seconds > 0 ? m.responses / m.seconds : 0);
    const ratio = rate(bare) > 0 ? (rate(ff) / rate(bare)).toFixed(2) : 'n/a';
    const p50 = (m: Measured) => percentile([...m.latencies].sort((x, y) => x - y), 0.5);
    const perCall = ff.served > 0 ? (ff.statements / ff.served).toFixed(1) : String(oneCall ?? 'n/a');
    out.push(`| ${label} | ${rate(ff).toFixed(0)} | ${rate(bare).toFixed(0)} | ${ratio} | ${p50(ff).toFixed(1)} | ${perCall} |`);
    notes.push(`(${c.key}) bare p50 ${p50(bare).toFixed(1)} ms, bare statements/call ${bare.served > 0 ? (bare.statements / bare.served).toFixed(1) : 'n/a'}; `
      + `one traced FieldForge call ran ${oneCall ?? 'n/a'} statement(s); errors/non-2xx: FieldForge ${ff.errors}, bare ${bare.errors}`
      + (ff.errors || bare.errors ? ' — WARNING: errors were not counted as requests' : ''));
  }
  out.push('');
  out.push('ratio = FieldForge req/s ÷ bare req/s (2xx answers per second of load); statements/call = SQL statements');
  out.push('FieldForge ran over the ui-effect requests it served while measured (auth and read-only transaction included).');
  for (const n of notes) out.push(n);
  out.push(`whole run ${elapsed.toFixed(0)} s`);
  console.log(out.join('\n'));
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const run = benchRun('ffbench_effects', () => currentJob?.stop());
  const { dbName, engine } = run;

  try {
    log(`creating ${dbName} (core, contacts, sales)…`);
    const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
    await createDatabase(platform, dbName, { modules: ['contacts', 'sales'] }); // drops it itself on failure
    run.created = true;
    const { key } = await platform.run(dbName, {}, () => createServiceAccountKey({ name: 'effects benchmark', groups: ['core.group_admin', 'core.group_user'] }));
    platform.forget(dbName);
    await engine.closeDatabase(dbName);
    const client = new pg.Client({ connectionString: databaseUrl(dbName), application_name: 'ffbench-effects' });
    run.client = client;
    await client.connect();

    const ff = await startServer('fieldforge', { DATABASE_URL: BASE_URL, BENCH_DB: dbName, FF_DB_POOL_MAX: '10' });
    run.servers.push(ff);
    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    log(`seeding ${PRODUCTS} products, ${ORDERS} orders × ${LINES_PER_ORDER} lines through FieldForge…`);
    const seeded = await seed(ff, headers, client);
    const bare = await startServer('bare', { BENCH_DB_URL: databaseUrl(dbName), BENCH_KEY_HASH: hashApiKey(key) });
    run.servers.push(bare);
    log(`  ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const outcomes: CaseOutcome[] = [];
    for (const c of cases(seeded)) {
      const outcome: CaseOutcome = { c };
      outcomes.push(outcome);
      try {
        log(`checking (${c.key}) ${c.title}…`);
        const { note, statements } = await check(c, headers, ff, bare);
        outcome.oneCall = statements.length;
        outcome.differ = note.startsWith('ANSWERS DIFFER');
        log(`  ${note}`);
        log(`  one FieldForge call ran ${statements.length} SQL statement(s)${SHOW_SQL ? ':' : ' (BENCH_SQL=1 prints them)'}`);
        if (SHOW_SQL) for (const s of statements) log(`    ${s.replace(/\s+/g, ' ').slice(0, 300)}`);
        log(`measuring (${c.key}) ${c.title}…`);
        outcome.result = await measureCase(c, seeded, headers, ff, bare);
      } catch (err) {
        outcome.problem = err instanceof Error ? err.message : String(err);
        log(`  (${c.key}) failed: ${outcome.problem}`);
      }
    }
    report(outcomes, dbName, (Date.now() - started) / 1000);
  } finally {
    await run.cleanup();
  }
}

main().catch((err: unknown) => {
  // Not a test: a problem is reported, never a failure of `npm run bench`.
  console.log(`\nThe form-effects benchmark did not finish: ${err instanceof Error ? err.message : String(err)}`);
  if (err instanceof Error && err.stack) log(err.stack);
  process.exitCode = 0;
});
