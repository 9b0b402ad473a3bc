/**
 * `BENCH_ONLY=messaging npm run bench`: messaging (issue 27 item 7), each case beside a baseline
 * measured in the same run on the same database.
 *
 * (a) `message_post` on a task with BENCH_FOLLOWERS (1,000) followers (the contacts of as many
 *     users of the core and project groups, followed through `addFollowers`), in-process:
 *     `Message.create_message({model, document, content, author})` in a unit of work (the
 *     audience resolved, linked, checked for read access, told after commit) → ms per post (median
 *     of BENCH_ROUNDS) and SQL statements per post (the database's `onStatement` listener, BEGIN
 *     and COMMIT included). Baseline, rounds interleaved: the bare SQL a hand-written program runs
 *     for the same rows through `pg` — `INSERT INTO message … RETURNING id` and `INSERT INTO
 *     fk_message_notified_contact … SELECT … FROM followers WHERE model = … AND document = …`, in a
 *     transaction. No target: the statement count must not grow with the followers (a test checks
 *     1, 100 and 1,000).
 * (b) Socket fan-out of one message to the same number of followers online, half of their sockets
 *     on each of two FieldForge workers (two server processes sharing the database and a Redis
 *     server of the bench's own; each user's own session token, `GET /api/ws?db=…`, a heartbeat
 *     every 20 s as the web client sends). Once both workers are idle again (each person coming
 *     online is announced to every other: a million presence frames, whose time is printed),
 *     `POST /api/execute/ProjectTask/message_post` as the API key, to one worker and then the
 *     other (a connection per post), and per socket the time from the request's send to its
 *     `activity_update` frame of kind `message` → p50/p99 over every socket of BENCH_ROUNDS ×
 *     BENCH_WRITES posts, after 10 to warm each side up. Target p99 ≤ 50 ms. Baseline, rounds interleaved: the
 *     realtime bench's bare socket server (bare-socket-server.ts), two processes holding as many
 *     sockets, an HTTP request to one of them publishing a frame of the same shape on Redis.
 * (c) The feed with BENCH_ROWS (1,000,000) notified rows (`seedNotifiedRows`: 200 other contacts,
 *     nearly all read, and a reader with 100 unread and 4,000 read rows): the statements
 *     `GET /api/activity-stream/unread-count` and `POST /api/activity-stream` run for the reader
 *     (captured with their parameters), their database time (EXPLAIN ANALYZE's Execution Time,
 *     best of 5) and the routes' latency over HTTP (an in-process server, median of 50). Target
 *     ≤ 5 ms of database time each. Baseline: the bare `SELECT count(*) … WHERE contact_id = $1
 *     AND read IS NOT TRUE` and the bare first page `SELECT id … WHERE contact_id = $1 ORDER BY
 *     message_id DESC LIMIT 30`, explained the same way — what the routes pay for exactness (rows
 *     on records the reader can no longer read are neither counted nor listed).
 * (d) Web Push throughput: BENCH_PUSHES (2,000) pushes queued by `queuePushes` for the users'
 *     subscriptions (rows as `PushSubscription.subscribe` stores them) to a local push service
 *     in a process of its own (test/support/push-endpoint.ts: it verifies each VAPID signature and
 *     decrypts each aes128gcm body), held back from their after-commit drain (which would send
 *     the first DRAIN_BATCH, 500, of them), then sent by `drainOutbox` until none is left →
 *     pushes/s. Baseline, rounds interleaved: as many plain
 *     unencrypted `fetch` POSTs of the same body size to the same endpoints, 16 at a time (the
 *     drain's parallelism); the service refuses them at its first check (415, no aes128gcm), so
 *     its verifying and decrypting is FieldForge's side only.
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_CASES
 * (default a,b,c,d), BENCH_FOLLOWERS (1,000), BENCH_ROUNDS (5), BENCH_WRITES (posts per round of
 * (b), 10), BENCH_ROWS (1,000,000), BENCH_PUSHES (2,000), BENCH_KEEP=1 (keep the database),
 * BENCH_WARM (posts of (b) to each side before the measured ones, 10), BENCH_TRACE=1 (to stderr: the statements of one post of (a), the statements of (c) with their
 * parameters and plans). Not a test: it prints figures and never fails CI.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import webpush from 'web-push';
import { Message } from '../modules/messaging/models/message.js';
import { PushSubscription } from '../modules/messaging/models/push_subscription.js';
import { DRAIN_BATCH, drainOutbox, queuePushes, recordUrl } from '../modules/messaging/push/outbox.js';
import { fittedPayload } from '../modules/messaging/push/send-push.js';
import { vapidKeys } from '../modules/messaging/push/vapid-keys.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { sql } from '../src/db/sql-fragment.js';
import { buildApp } from '../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { currentEnv } from '../src/orm/env.js';
import { makeEnv } from '../src/orm/transaction.js';
import { Platform } from '../src/platform/platform.js';
import { TestRedis } from '../test/support/redis-server.js';
import { BENCH_BASE_URL, createBenchDatabaseWithKeys, databaseUrl } from './bench-database.js';
import { median, percentile, textTable, timed } from './bench-measures.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';
import { emptyFanOut, FanOutProbe, postOnce, untilIdle, type FanOut } from './support/fan-out-probe.js';
import { createPeople, followedTask, openSessions, type People, type RunIn } from './support/messaging-people.js';
import { seedNotifiedRows } from './support/notified-rows.js';
import { PushEndpointProcess } from './support/push-endpoint-process.js';

const BASE_URL = BENCH_BASE_URL;
const CASES = (process.env.BENCH_CASES ?? 'a,b,c,d').split(',').map((c) => c.trim());
const FOLLOWERS = Math.max(2, Number(process.env.BENCH_FOLLOWERS ?? 1_000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const WRITES = Math.max(1, Number(process.env.BENCH_WRITES ?? 10));
const ROWS = Math.max(10_000, Number(process.env.BENCH_ROWS ?? 1_000_000));
const PUSHES = Math.max(1, Number(process.env.BENCH_PUSHES ?? 2_000));
const KEEP = process.env.BENCH_KEEP === '1';
const TRACE = process.env.BENCH_TRACE === '1';
/** The reader of (c): unread and read rows of its own among the seeded ones. */
const READER_UNREAD = 100;
const READER_READ = 4_000;
const PUSH_PARALLELISM = 16;
/** The web client's heartbeat (web/client/realtime/socket.js). */
const HEARTBEAT_MS = 20_000;
/** Posts of (b) to each side before the measured ones. */
const WARM_POSTS = Math.max(0, Number(process.env.BENCH_WARM ?? 10));
const OPENING_NOTE = '100 upgrades at a time, each waiting for its hello';

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 1) => n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const count = (n: number) => n.toLocaleString('en');

interface Bench {
  dbName: string;
  key: string;
  secret: string;
  platform: Platform;
  run: RunIn;
  client: pg.Client;
  people: People;
  print(line: string): void;
}

// ------------------------------------------------------------------------------------------------
// (a) message_post with 1,000 followers
// ------------------------------------------------------------------------------------------------

async function caseA(b: Bench): Promise<void> {
  const task = await followedTask(b.run, 'Followed by all (a)', b.people.contacts.slice(0, FOLLOWERS));
  const author = b.people.contacts[FOLLOWERS]!; // a person who does not follow the task
  const database = await b.platform.database(b.dbName);
  const ff = { ms: [] as number[], statements: [] as number[], linked: 0 };
  const bare = { ms: [] as number[], linked: 0 };
  let n = 0;
  const ffPost = async (into: typeof ff | null) => {
    const seen: string[] = [];
    const off = database.onStatement((s, detail) => seen.push(`${fmt(detail?.durationMs ?? NaN, 2).padStart(6)} ms  ${s}`));
    const { ms, value: id } = await timed(() => b.run(async () => (await Message.create_message({
      model: 'ProjectTask', document: task.id, content: `<p>Post ${++n} to every follower</p>`, author,
    })).id)).finally(off);
    if (into) {
      into.ms.push(ms);
      into.statements.push(seen.length);
      if (TRACE && into.statements.length === 1) log(`(a) statements of one post:\n${seen.map((s) => `  ${s.replace(/\s+/g, ' ').slice(0, 300)}`).join('\n')}`);
      into.linked = await linkedTo(b.client, id);
    }
  };
  const barePost = async (into: typeof bare | null) => {
    const { ms, value: id } = await timed(() => bareMessage(b.client, task.id, `<p>Post ${++n} to every follower</p>`, author));
    if (into) {
      into.ms.push(ms);
      into.linked = await linkedTo(b.client, id);
    }
  };
  for (let i = 0; i < 2; i++) {
    await ffPost(null);
    await barePost(null);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 ? ['bare', 'ff'] : ['ff', 'bare']) await (which === 'ff' ? ffPost(ff) : barePost(bare));
  }
  const ffMs = median(ff.ms);
  const bareMs = median(bare.ms);
  b.print(`\n(a) message_post on a task with ${count(task.followers)} followers (in-process unit of work; medians of ${ROUNDS} interleaved rounds)`);
  for (const line of textTable(['', 'ms per post', 'statements', 'rows linked'], [
    ['FieldForge Message.create_message', fmt(ffMs, 2), String(median(ff.statements)), count(ff.linked)],
    ['bare INSERT … RETURNING + INSERT … SELECT', fmt(bareMs, 2), '4 (BEGIN, 2 INSERTs, COMMIT)', count(bare.linked)],
  ])) b.print(`  ${line}`);
  b.print(`  FieldForge / bare: ${fmt(ffMs / bareMs, 2)}×   (rounds FieldForge ${ff.ms.map((x) => fmt(x)).join(', ')} ms; bare ${bare.ms.map((x) => fmt(x)).join(', ')} ms)`);
}

/** The hand-written program: the message, then its rows for the record's followers but its author. */
async function bareMessage(client: pg.Client, task: number, content: string, author: number): Promise<number> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ id: number }>(
      `INSERT INTO message (model, document, content, message_type, author_id, record_name, created_date, updated_date)
       VALUES ('ProjectTask', $1, $2, 'comment', $3, 'Followed by all (a)', now(), now()) RETURNING id`, [task, content, author]);
    const id = rows[0]!.id;
    await client.query(
      `INSERT INTO fk_message_notified_contact (message_id, contact_id, read, model, document, created_date, updated_date)
       SELECT $1, contact_id, false, model, document, now(), now() FROM followers
        WHERE model = 'ProjectTask' AND document = $2 AND contact_id <> $3`, [id, task, author]);
    await client.query('COMMIT');
    return id;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

async function linkedTo(client: pg.Client, message: number): Promise<number> {
  const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM fk_message_notified_contact WHERE message_id = $1', [message]);
  return Number(rows[0]!.n);
}

// ------------------------------------------------------------------------------------------------
// (b) socket fan-out over two workers
// ------------------------------------------------------------------------------------------------

async function caseB(b: Bench, started: ServerProcess[]): Promise<void> {
  const redis = await TestRedis.start();
  const probes: FanOutProbe[] = [];
  let heartbeat: NodeJS.Timeout | undefined;
  try {
    const followers = { uids: b.people.uids.slice(0, FOLLOWERS), contacts: b.people.contacts.slice(0, FOLLOWERS) };
    const task = await followedTask(b.run, 'Followed by all (b)', followers.contacts);
    const tokens = await openSessions(b.run, b.dbName, followers.uids, b.secret);
    const prefix = `ffbench${randomBytes(3).toString('hex')}:`;
    const workerEnv = { DATABASE_URL: BASE_URL, BENCH_DB: b.dbName, REDIS_URL: redis.url, FF_REDIS_PREFIX: prefix, FF_SECRET: b.secret };
    const servers = await Promise.all([
      startServerProcess('bench/fieldforge-server.ts', workerEnv), startServerProcess('bench/fieldforge-server.ts', workerEnv),
      startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare', REDIS_URL: redis.url, BENCH_CHANNEL: `${prefix}bare` }),
      startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare', REDIS_URL: redis.url, BENCH_CHANNEL: `${prefix}bare` }),
    ]);
    started.push(...servers);
    const [ff1, ff2, bare1, bare2] = servers as [ServerProcess, ServerProcess, ServerProcess, ServerProcess];
    const half = Math.floor(FOLLOWERS / 2);
    log(`(b) opening ${FOLLOWERS} followers' sockets over 2 workers and ${FOLLOWERS} bare sockets over 2 processes…`);
    const ff = new FanOutProbe();
    const bare = new FanOutProbe();
    probes.push(ff, bare);
    const auth = tokens.map((t) => ({ authorization: `Bearer ${t}` }));
    const opening = performance.now();
    // A heartbeat at once and every 20 s, as the web client sends: a socket silent for 35 s would
    // go offline and come back, announced to everyone twice, in the middle of the posts.
    heartbeat = setInterval(() => ff.sendAll({ type: 'heartbeat' }), HEARTBEAT_MS);
    await ff.open(`ws://127.0.0.1:${ff1.port}/api/ws?db=${b.dbName}`, auth.slice(0, half), { type: 'heartbeat' });
    await ff.open(`ws://127.0.0.1:${ff2.port}/api/ws?db=${b.dbName}`, auth.slice(half), { type: 'heartbeat' });
    const openedMs = performance.now() - opening;
    const bareAuth = Array.from({ length: FOLLOWERS }, () => ({ authorization: 'Bearer bare' }));
    await bare.open(`ws://127.0.0.1:${bare1.port}/`, bareAuth.slice(0, half));
    await bare.open(`ws://127.0.0.1:${bare2.port}/`, bareAuth.slice(half));
    // 1,000 people coming online: each is announced to every other (a million presence frames).
    const settledMs = await untilIdle([ff1.port, ff2.port]);

    let n = 0;
    const ffPost = (marker: string) => async () => {
      const port = (n++ % 2 ? ff2 : ff1).port;
      const res = await postOnce(port, '/api/execute/ProjectTask/message_post', JSON.stringify({ ids: [task.id], request_body: { inputs: { content: `<p>${marker}</p>` } } }),
        { authorization: `Bearer ${b.key}`, 'x-db-name': b.dbName, 'content-type': 'application/json' });
      if (res.status !== 200) throw new Error(`message_post answered ${res.status}: ${res.text.slice(0, 300)}`);
    };
    let p = 0;
    const barePost = (marker: string) => async () => {
      const frame = JSON.stringify({
        type: 'activity_update',
        data: { kind: 'message', model: 'ProjectTask', document: task.id, message_id: 1_000_000 + p, title: 'Messaging benchmark', body: marker },
      });
      await postOnce((p++ % 2 ? bare2 : bare1).port, '/__publish', frame);
    };
    const ffRun = emptyFanOut();
    const bareRun = emptyFanOut();
    const warm = emptyFanOut();
    let k = 0;
    const once = async (which: 'ff' | 'bare', into: FanOut) => {
      const marker = `Fan-out #${++k}#`;
      if (which === 'ff') await ff.fanOut(marker, ffPost(marker), into);
      else await bare.fanOut(marker, barePost(marker), into);
      await sleep(150);
    };
    // Warm-up: the first posts of a worker are slower (its code not yet optimised, its statements
    // not yet prepared: ~50 ms for the first 7 of them, then ~38); the figures are the steady state's.
    for (let i = 0; i < WARM_POSTS; i++) {
      await once('ff', warm);
      await once('bare', warm);
    }
    if (warm.missed) log(`(b) warm-up: ${warm.missed} frames missing`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const which of r % 2 ? (['bare', 'ff'] as const) : (['ff', 'bare'] as const)) {
        for (let w = 0; w < WRITES; w++) await once(which, which === 'ff' ? ffRun : bareRun);
      }
    }
    const row = (label: string, m: FanOut) => [label, fmt(percentile(m.latencies, 50)), fmt(percentile(m.latencies, 99)), fmt(Math.max(...m.latencies)),
      fmt(median(m.requestMs)), m.missed ? `${m.missed} (${m.late} late)` : '0'];
    b.print(`\n(b) fan-out of one message to ${count(FOLLOWERS)} followers online, half on each of 2 processes (${ROUNDS} interleaved rounds × ${WRITES} posts after ${WARM_POSTS} to warm up; per-socket ms from the request's send)`);
    for (const line of textTable(['', 'p50', 'p99', 'max', 'request answered (median)', 'frames missing after 5 s'], [
      row('FieldForge: message_post → activity_update message', ffRun),
      row('bare: POST → Redis PUBLISH → 2 ws processes', bareRun),
    ])) b.print(`  ${line}`);
    b.print(`  ${count(FOLLOWERS)} people's sockets opened in ${fmt(openedMs / 1000)} s (${OPENING_NOTE}); both workers idle again ${fmt(settledMs / 1000)} s later (each person announced online to every other), before the first post`);
    if (TRACE) for (const [label, m] of [['FieldForge', ffRun], ['bare', bareRun]] as const) {
      log(`(b) ${label} posts (answered / first frame / last frame, ms): ${m.posts.map((x) => `${fmt(x.requestMs, 0)}/${fmt(x.first, 0)}/${fmt(x.last, 0)}`).join('  ')}`);
    }
    for (const [label, m] of [['FieldForge', ffRun], ['bare', bareRun]] as const) if (m.incomplete.length) log(`(b) ${label} posts with frames missing: ${m.incomplete.join(', ')}`);
    const p99 = percentile(ffRun.latencies, 99);
    b.print(`  target p99 ≤ 50 ms: ${p99 <= 50 ? 'met' : 'MISSED'}   (load average now ${loadavg()[0]!.toFixed(1)})`);
  } finally {
    clearInterval(heartbeat);
    for (const probe of probes) probe.close();
    await sleep(500); // the workers see their sockets go before they stop
    for (const s of started) await stopServerProcess(s).catch(() => {});
    started.length = 0;
    await redis.stop();
  }
}

// ------------------------------------------------------------------------------------------------
// (c) the feed with 1,000,000 notified rows
// ------------------------------------------------------------------------------------------------

interface Captured {
  sql: string;
  parameters: readonly unknown[];
}

async function explainMs(client: pg.Client, statement: Captured): Promise<{ ms: number; index: string }> {
  let best = { ms: Infinity, index: '' };
  for (let i = 0; i < 5; i++) {
    const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, statement.parameters as unknown[]);
    const [doc] = rows[0]['QUERY PLAN'];
    const indexes = [...new Set([...JSON.stringify(doc.Plan).matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]!))]
      .filter((name) => /^(fk_message_notified_contact|message)_/.test(name)); // the feed's tables, not the access rules'
    if (doc['Execution Time'] < best.ms) best = { ms: doc['Execution Time'], index: indexes.join(', ') || 'none' };
  }
  return best;
}

/** The statement, its parameters and its plan as text (BENCH_TRACE=1). */
async function planText(client: pg.Client, statement: Captured): Promise<string> {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, statement.parameters as unknown[]);
  return `${statement.sql}\n${JSON.stringify(statement.parameters)}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`;
}

async function caseC(b: Bench): Promise<void> {
  const reader = await createPeople(b.run, 1, 'Feed reader');
  const readerContact = reader.contacts[0]!;
  const [token] = await openSessions(b.run, b.dbName, reader.uids, b.secret);
  const busy = await followedTask(b.run, 'Busy task (c)', []);
  log(`(c) seeding ${count(ROWS)} notified rows…`);
  const seeded = await timed(() => seedNotifiedRows({ run: (fn) => b.run(fn) }, {
    rows: ROWS, reader: readerContact, readerUnread: READER_UNREAD, readerRead: READER_READ, model: 'ProjectTask', document: busy.id,
  }));
  await b.client.query('VACUUM ANALYZE fk_message_notified_contact');
  await b.client.query('ANALYZE message');
  const total = Number((await b.client.query<{ n: string }>('SELECT count(*) AS n FROM fk_message_notified_contact')).rows[0]!.n);
  log(`(c) seeded in ${fmt(seeded.ms / 1000)} s; ${count(total)} notified rows`);

  const app = await buildApp(b.platform, { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const headers = { authorization: `Bearer ${token}`, 'x-db-name': b.dbName, 'content-type': 'application/json' };
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text) as unknown;
    };
    const database = await b.platform.database(b.dbName);
    const captured = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const seen: Captured[] = [];
      const off = database.onStatement((s, detail) => seen.push({ sql: s, parameters: detail?.parameters ?? [] }));
      const answer = await call(method, path, body).finally(off);
      return { seen, answer };
    };
    const routes = [
      { label: 'GET /api/activity-stream/unread-count', method: 'GET' as const, path: '/api/activity-stream/unread-count', body: undefined,
        pick: (s: Captured) => /count\(/i.test(s.sql) && s.sql.includes('fk_message_notified_contact') },
      { label: 'POST /api/activity-stream (first page)', method: 'POST' as const, path: '/api/activity-stream', body: {},
        pick: (s: Captured) => s.sql.includes('fk_message_notified_contact') && /limit/i.test(s.sql) },
    ];
    const rows: string[][] = [];
    const within: boolean[] = [];
    for (const route of routes) {
      await captured(route.method, route.path, route.body); // warm: caches, prepared statements
      const { seen, answer } = await captured(route.method, route.path, route.body);
      const statement = seen.find(route.pick);
      if (!statement) throw new Error(`${route.label}: no statement of the notified rows among\n${seen.map((s) => s.sql).join('\n')}`);
      const db = await explainMs(b.client, statement);
      if (TRACE) log(await planText(b.client, statement));
      for (let i = 0; i < 5; i++) await call(route.method, route.path, route.body);
      const http: number[] = [];
      for (let i = 0; i < 50; i++) http.push((await timed(() => call(route.method, route.path, route.body))).ms);
      const shown = Array.isArray(answer) ? `${answer.length} items` : `count ${(answer as { count: number }).count}`;
      rows.push([route.label, fmt(db.ms, 3), db.index, String(seen.length), fmt(median(http), 2), shown]);
      within.push(db.ms <= 5);
    }
    const bareCount = await explainMs(b.client, { sql: 'SELECT count(*) FROM fk_message_notified_contact WHERE contact_id = $1 AND read IS NOT TRUE', parameters: [readerContact] });
    const barePage = await explainMs(b.client, { sql: 'SELECT id FROM fk_message_notified_contact WHERE contact_id = $1 ORDER BY message_id DESC LIMIT 30', parameters: [readerContact] });
    rows.push(['bare SELECT count(*) … read IS NOT TRUE', fmt(bareCount.ms, 3), bareCount.index, '1', '', '']);
    rows.push(['bare SELECT id … ORDER BY message_id DESC LIMIT 30', fmt(barePage.ms, 3), barePage.index, '1', '', '']);
    b.print(`\n(c) the feed with ${count(total)} notified rows (reader: ${READER_UNREAD} unread, ${count(READER_READ)} read; database ms = EXPLAIN ANALYZE Execution Time, best of 5; HTTP = median of 50, in-process server)`);
    for (const line of textTable(['', 'database ms', 'indexes of the feed tables', 'statements', 'HTTP ms', 'answer'], rows)) b.print(`  ${line}`);
    b.print(`  target ≤ 5 ms database time each: ${within.every(Boolean) ? 'met' : 'MISSED'}`);
  } finally {
    await app.close();
  }
}

// ------------------------------------------------------------------------------------------------
// (d) Web Push throughput
// ------------------------------------------------------------------------------------------------

async function caseD(b: Bench): Promise<void> {
  const endpoint = await PushEndpointProcess.start();
  process.env.FF_PUSH_ALLOWED_ORIGINS = endpoint.origin;
  try {
    const users = b.people.uids.slice(0, Math.min(PUSHES, b.people.uids.length));
    const subscriptions = await endpoint.subscriptions(Array.from({ length: PUSHES }, (_, i) => `bench${i}`));
    const keys = await b.run(async () => {
      const k = (await vapidKeys())!;
      await PushSubscription.create_many(subscriptions.map((s, i) => ({
        user: users[i % users.length], endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth, vapid_public_key: k.publicKey,
      })));
      return k;
    });
    const payload = {
      kind: 'message', model: 'ProjectTask', document: 1, message_id: 1, title: 'Messaging benchmark',
      body: 'A message of a typical length, long enough to fill the notification of a phone: what changed, by whom and what to do next.',
    };
    const body = webpush.generateRequestDetails(subscriptions[0]!, fittedPayload({ ...payload, url: recordUrl(payload) }), {
      vapidDetails: { subject: keys.subject, publicKey: keys.publicKey, privateKey: keys.privateKey }, TTL: 60, contentEncoding: 'aes128gcm',
    }).body as Buffer;
    const database = await b.platform.database(b.dbName);
    const registry = await b.platform.registry(b.dbName);
    const standalone = makeEnv(database, registry, database.executor, { su: true });
    const ff: number[] = [];
    const bare: number[] = [];
    let sentOk = true;
    const ffRound = async (into: number[] | null) => {
      await endpoint.clear();
      await b.run(async () => {
        await queuePushes(users, payload);
        // Held back from the after-commit drain, which would send the first DRAIN_BATCH of them.
        await sql`UPDATE push_outbox SET claimed_until = now() + interval '1 hour' WHERE claimed_until IS NULL`.execute(currentEnv().work.trx);
      });
      await sleep(300); // the after-commit drain claims nothing and returns
      await b.client.query('UPDATE push_outbox SET claimed_until = NULL');
      let claimed = 0;
      const { ms } = await timed(async () => {
        while (claimed < PUSHES) {
          const outcome = await drainOutbox(standalone);
          const n = [...outcome.values()].reduce((x, y) => x + y, 0);
          claimed += n;
          if (n < DRAIN_BATCH) break;
        }
      });
      const counts = await endpoint.counts();
      if (counts.received !== PUSHES) {
        sentOk = false;
        log(`(d) the push service received ${counts.received} of ${PUSHES} (refused ${counts.rejected}: ${JSON.stringify(counts.statuses)})`);
      }
      into?.push(PUSHES / (ms / 1000));
    };
    const bareRound = async (into: number[] | null) => {
      let next = 0;
      const { ms } = await timed(() => Promise.all(Array.from({ length: PUSH_PARALLELISM }, async () => {
        while (next < PUSHES) {
          const s = subscriptions[next++]!;
          const res = await fetch(s.endpoint, { method: 'POST', body, headers: { 'content-type': 'application/octet-stream', ttl: '60' } });
          await res.arrayBuffer();
        }
      })));
      into?.push(PUSHES / (ms / 1000));
    };
    log(`(d) ${count(PUSHES)} pushes per round to ${endpoint.origin}…`);
    await ffRound(null);
    await bareRound(null);
    for (let r = 0; r < ROUNDS; r++) {
      for (const which of r % 2 ? ['bare', 'ff'] : ['ff', 'bare']) await (which === 'ff' ? ffRound(ff) : bareRound(bare));
    }
    const ffRate = median(ff);
    const bareRate = median(bare);
    b.print(`\n(d) Web Push: ${count(PUSHES)} queued pushes sent by drainOutbox to a local push service in its own process (medians of ${ROUNDS} interleaved rounds; body ${body.length} bytes)`);
    for (const line of textTable(['', 'per second', 'rounds'], [
      ['FieldForge drainOutbox (VAPID-signed, aes128gcm)', fmt(ffRate, 0), ff.map((x) => fmt(x, 0)).join(', ')],
      [`bare fetch POSTs of ${body.length} bytes, ${PUSH_PARALLELISM} at a time`, fmt(bareRate, 0), bare.map((x) => fmt(x, 0)).join(', ')],
    ])) b.print(`  ${line}`);
    b.print(`  FieldForge / bare: ${fmt(ffRate / bareRate, 2)}   every push received, verified and decrypted: ${sentOk ? 'yes' : 'NO (see above)'}`);
  } finally {
    delete process.env.FF_PUSH_ALLOWED_ORIGINS;
    await endpoint.stop();
  }
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dbName = `ffbench_messaging_${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const engine = new PostgresEngine({ url: BASE_URL });
  const started: ServerProcess[] = [];
  let platform: Platform | null = null;
  let client: pg.Client | null = null;
  const load0 = loadavg();
  try {
    log(`creating ${dbName} (project, messaging)…`);
    const [created] = await createBenchDatabaseWithKeys(engine, dbName, ['project'], [{ name: 'messaging benchmark', groups: ['core.group_admin', 'core.group_user'] }]);
    platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]), secret);
    const p = platform;
    const run: RunIn = (fn, options = {}) => p.run(dbName, options, fn);
    client = new pg.Client({ connectionString: databaseUrl(dbName) });
    await client.connect();
    log(`creating ${FOLLOWERS + 1} users…`);
    const people = await timed(() => createPeople(run, FOLLOWERS + 1, 'Follower'));
    log(`  in ${fmt(people.ms / 1000)} s`);
    const b: Bench = { dbName, key: created!.key, secret, platform, run, client, people: people.value, print: (line) => console.log(line) };
    b.print(`\nMessaging; ${availableParallelism()} CPUs, load average ${load0.map((l) => l.toFixed(1)).join(' ')} at the start.`);
    if (CASES.includes('a')) await caseA(b);
    if (CASES.includes('b')) await caseB(b, started);
    if (CASES.includes('c')) await caseC(b);
    if (CASES.includes('d')) await caseD(b);
  } finally {
    for (const s of started) await stopServerProcess(s).catch(() => {});
    await client?.end().catch(() => {});
    platform?.forget(dbName);
    await engine.closeDatabase(dbName).catch(() => {});
    if (!KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await (platform ? platform.close() : engine.close()).catch(() => {});
  }
}

await main();
