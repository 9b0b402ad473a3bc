/**
 * `BENCH_ONLY=livechat npm run bench`: the live chat's visitor side (issue 28 item 6), over two
 * FieldForge workers (two server processes sharing the database and a Redis server of the bench's
 * own), each case beside a baseline measured in the same run.
 *
 * (a) BENCH_VISITORS (2,000) visitor sockets (`GET /livechat/ws?token=…`, one session each, its
 *     `history` received), half on each worker: resident memory per socket on each worker beyond
 *     the same worker with none, after a full garbage collection on both sides of the measure.
 *     Baseline: the realtime bench's bare `node:http` + `ws` server (bare-socket-server.ts), two
 *     processes holding as many sockets.
 * (b) A visitor message to the agent: `POST /livechat/message` (a session of its own each time,
 *     alternately to each worker, a connection per post) → the `livechat_message` frame on the
 *     agent's main socket, one on each worker (the agent follows every session): per agent socket
 *     the time from the request's send, p50/p99 over BENCH_ROUNDS × BENCH_WRITES posts after 10 to
 *     warm up. Target p99 ≤ 50 ms. Baseline, rounds interleaved: an HTTP request to a bare process
 *     publishing a frame on Redis, both bare processes sending it to their socket.
 * (c) BENCH_RECONNECTS (1,000) of the visitors' sockets are cut at once; an agent's reply to each
 *     of their sessions is written meanwhile (in-process, a unit of work per 100); then all
 *     reconnect at once with the `after_id` they had: time until every socket has its `history`,
 *     and whether each holds exactly its one missed reply (none lost, none twice). Baseline: as many
 *     sockets reconnecting at once to the bare processes (their hello).
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_CASES
 * (default a,b,c), BENCH_VISITORS, BENCH_RECONNECTS, BENCH_ROUNDS (5), BENCH_WRITES (20 per round),
 * BENCH_KEEP=1 (keep the database). Not a test: it prints figures and never fails CI.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { Group } from '../modules/core/models/group.js';
import { User } from '../modules/core/models/user.js';
import { LiveChatSession } from '../modules/livechat/models/livechat_session.js';
import { openSession } from '../src/auth/sessions.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { Platform } from '../src/platform/platform.js';
import { TestRedis } from '../test/support/redis-server.js';
import { BENCH_BASE_URL, createBenchDatabaseWithKeys } from './bench-database.js';
import { percentile } from './bench-measures.js';
import { postOnce, untilIdle } from './support/fan-out-probe.js';
import { memoryOf, startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';

const BASE_URL = BENCH_BASE_URL;
const CASES = (process.env.BENCH_CASES ?? 'a,b,c').split(',').map((c) => c.trim());
const VISITORS = Math.max(2, Number(process.env.BENCH_VISITORS ?? 2_000));
const RECONNECTS = Math.min(VISITORS, Math.max(1, Number(process.env.BENCH_RECONNECTS ?? 1_000)));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const WRITES = Math.max(1, Number(process.env.BENCH_WRITES ?? 20));
const KEEP = process.env.BENCH_KEEP === '1';
/** Upgrades in flight at once while opening the sockets of (a). */
const OPENING = 100;

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (x: number, digits = 1) => x.toFixed(digits);

interface Visitor {
  session: number;
  token: string;
  ws: WebSocket | null;
  /** Ids of the messages this visitor's socket received (history and live), in order. */
  ids: number[];
}

/** Opens a socket and resolves with its first frame (a visitor's `history`, the bare hello). */
function openSocket(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; first: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const timer = setTimeout(() => reject(new Error(`no first frame within 60 s from ${url.replace(/token=[^&]+/, 'token=…')}`)), 60_000);
    ws.once('message', (data) => {
      clearTimeout(timer);
      resolve({ ws, first: JSON.parse(data.toString()) });
    });
    ws.once('error', (err) => (clearTimeout(timer), reject(err)));
    ws.once('unexpected-response', (_req, res) => (clearTimeout(timer), reject(new Error(`upgrade answered ${res.statusCode}`))));
  });
}

async function settledRss(server: ServerProcess): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await fetch(`http://127.0.0.1:${server.port}/__gc`, { method: 'POST' });
    await sleep(500);
  }
  return memoryOf(server.child.pid!).rss;
}

const visitorUrl = (port: number, db: string, v: Visitor, afterId?: number) =>
  `ws://127.0.0.1:${port}/livechat/ws?token=${v.token}&db=${db}${afterId ? `&after_id=${afterId}` : ''}`;

/** Connects visitors in batches of OPENING, recording the ids of their history and of every later message. */
async function connectVisitors(port: number, db: string, visitors: Visitor[], afterId?: (v: Visitor) => number | undefined, batch = OPENING): Promise<void> {
  for (let i = 0; i < visitors.length; i += batch) {
    await Promise.all(visitors.slice(i, i + batch).map(async (v) => {
      const { ws, first } = await openSocket(visitorUrl(port, db, v, afterId?.(v)));
      if (first.type !== 'history') throw new Error(`the first frame was ${first.type}`);
      v.ws = ws;
      v.ids.push(...(first.messages as { id: number }[]).map((m) => m.id));
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString());
        if (frame.type === 'message') v.ids.push(frame.message.id);
      });
    }));
  }
}

interface Bench {
  dbName: string;
  secret: string;
  platform: Platform;
  visitors: Visitor[];
  agentToken: string;
  ff: [ServerProcess, ServerProcess];
  bare: [ServerProcess, ServerProcess];
  agentUid: number;
}

// (a) -------------------------------------------------------------------------------------------

async function caseA(b: Bench): Promise<void> {
  const half = Math.floor(b.visitors.length / 2);
  const groups = [b.visitors.slice(0, half), b.visitors.slice(half)];
  const before = await Promise.all(b.ff.map(settledRss));
  const opening = performance.now();
  await Promise.all(b.ff.map((s, i) => connectVisitors(s.port, b.dbName, groups[i]!)));
  const openedS = (performance.now() - opening) / 1000;
  await sleep(3_000);
  const after = await Promise.all(b.ff.map(settledRss));

  const bareBefore = await Promise.all(b.bare.map(settledRss));
  const bareSockets: WebSocket[] = [];
  for (const [i, s] of b.bare.entries()) {
    for (let k = 0; k < groups[i]!.length; k += OPENING) {
      const n = Math.min(OPENING, groups[i]!.length - k);
      bareSockets.push(...(await Promise.all(Array.from({ length: n }, () => openSocket(`ws://127.0.0.1:${s.port}/`, { authorization: 'Bearer bare' })))).map((o) => o.ws));
    }
  }
  await sleep(3_000);
  const bareAfter = await Promise.all(b.bare.map(settledRss));
  for (const ws of bareSockets) ws.terminate();

  const per = (a: number[], z: number[]) => a.map((x, i) => (z[i]! - x) / groups[i]!.length);
  const ffPer = per(before, after);
  const barePer = per(bareBefore, bareAfter);
  const mib = (kib: number) => `${Math.round(kib / 1024)} MiB`;
  console.log(`\n(a) ${b.visitors.length.toLocaleString('en')} visitor sockets, half on each of 2 workers (RSS after a full GC, beyond the same process with none)`);
  for (const i of [0, 1]) {
    console.log(`  FieldForge worker ${i + 1}  /livechat/ws   ${fmt(ffPer[i]!).padStart(6)} KiB/socket   (${mib(before[i]!)} → ${mib(after[i]!)})`);
  }
  for (const i of [0, 1]) console.log(`  bare process ${i + 1}  node:http + ws  ${fmt(barePer[i]!).padStart(6)} KiB/socket   (${mib(bareBefore[i]!)} → ${mib(bareAfter[i]!)})`);
  const ffMean = (ffPer[0]! + ffPer[1]!) / 2;
  const bareMean = (barePer[0]! + barePer[1]!) / 2;
  console.log(`  FieldForge / bare: ${fmt(ffMean / bareMean, 2)}×; all ${b.visitors.length.toLocaleString('en')} histories received in ${fmt(openedS)} s   (load average now ${fmt(loadavg()[0]!)})`);
}

// (b) -------------------------------------------------------------------------------------------

/** Per agent socket, the time from `send()` to its frame that `match` accepts. */
async function timeToSockets(sockets: WebSocket[], match: (frame: any) => boolean, send: () => Promise<void>, into: number[]): Promise<number> {
  const t0 = performance.now();
  let missed = sockets.length;
  const arrivals = sockets.map((ws) => new Promise<void>((resolve) => {
    const timer = setTimeout(() => (ws.off('message', on), resolve()), 5_000);
    function on(data: WebSocket.RawData) {
      if (!match(JSON.parse(data.toString()))) return;
      into.push(performance.now() - t0);
      missed--;
      clearTimeout(timer);
      ws.off('message', on);
      resolve();
    }
    ws.on('message', on);
  }));
  await send();
  await Promise.all(arrivals);
  return missed;
}

async function caseB(b: Bench): Promise<void> {
  const agentSockets = await Promise.all(b.ff.map(async (s) => (await openSocket(`ws://127.0.0.1:${s.port}/api/ws?db=${b.dbName}`, { authorization: `Bearer ${b.agentToken}` })).ws));
  const bareSockets = await Promise.all(b.bare.map(async (s) => (await openSocket(`ws://127.0.0.1:${s.port}/`, { authorization: 'Bearer bare' })).ws));
  await untilIdle(b.ff.map((s) => s.port), 60_000);
  const ff: number[] = [];
  const bare: number[] = [];
  let missed = 0;
  let next = 0;
  const visitorPost = async () => {
    const v = b.visitors[next % b.visitors.length]!;
    const port = b.ff[next++ % 2]!.port;
    const marker = `m${next}-${randomBytes(3).toString('hex')}`;
    const res = await postOnce(port, `/livechat/message?db=${b.dbName}`, JSON.stringify({ token: v.token, content: marker }), { 'content-type': 'application/json' });
    if (res.status !== 200) throw new Error(`/livechat/message answered ${res.status}: ${res.text.slice(0, 200)}`);
  };
  const matchFf = (f: any) => f.type === 'realtime_data' && f.data?.event === 'livechat_message';
  let p = 0;
  const frame = JSON.stringify({ type: 'realtime_data', data: { event: 'livechat_message', session_id: 1, message: { id: 1, content: '<p>x</p>', author_name: 'Visitor', is_agent: false, created_date: new Date().toISOString(), attachments: [] } } });
  const barePublish = async () => {
    const res = await postOnce(b.bare[p++ % 2]!.port, '/__publish', frame);
    if (res.status !== 200) throw new Error(`bare publish answered ${res.status}`);
  };
  const warm: number[] = [];
  for (let i = 0; i < 10; i++) {
    await timeToSockets(agentSockets, matchFf, visitorPost, warm);
    await timeToSockets(bareSockets, () => true, barePublish, warm);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 ? ['bare', 'ff'] : ['ff', 'bare']) {
      for (let w = 0; w < WRITES; w++) {
        if (which === 'ff') missed += await timeToSockets(agentSockets, matchFf, visitorPost, ff);
        else await timeToSockets(bareSockets, () => true, barePublish, bare);
        await sleep(20);
      }
    }
  }
  for (const ws of [...agentSockets, ...bareSockets]) ws.terminate();
  const line = (label: string, xs: number[]) => `  ${label.padEnd(50)} p50 ${fmt(percentile(xs, 50)).padStart(6)} ms   p99 ${fmt(percentile(xs, 99)).padStart(6)} ms   max ${fmt(Math.max(...xs)).padStart(6)} ms`;
  console.log(`\n(b) a visitor's message to the agent's socket on each worker (${ROUNDS} interleaved rounds × ${WRITES} posts, alternately to each worker; from the request's send)`);
  console.log(line('FieldForge: POST /livechat/message → livechat_message', ff));
  console.log(line('bare: POST → Redis PUBLISH → 2 ws processes', bare));
  const p99 = percentile(ff, 99);
  console.log(`  frames missing: ${missed}   FieldForge / bare p99: ${fmt(p99 / percentile(bare, 99), 2)}×   target p99 ≤ 50 ms: ${p99 <= 50 ? 'met' : 'MISSED'}   (load average now ${fmt(loadavg()[0]!)})`);
}

// (c) -------------------------------------------------------------------------------------------

async function caseC(b: Bench): Promise<void> {
  const cut = b.visitors.filter((v) => v.ws).slice(0, RECONNECTS);
  if (cut.length < RECONNECTS) await connectVisitors(b.ff[0].port, b.dbName, b.visitors.filter((v) => !v.ws).slice(0, RECONNECTS - cut.length));
  const group = b.visitors.filter((v) => v.ws).slice(0, RECONNECTS);
  await sleep(500);
  const had = new Map(group.map((v) => [v, Math.max(0, ...v.ids)]));
  const before = new Map(group.map((v) => [v, v.ids.length]));
  for (const v of group) {
    v.ws!.removeAllListeners('message');
    v.ws!.terminate();
    v.ws = null;
  }
  // The agent answers every one of them while they are away (in-process: no socket to reach).
  const writing = performance.now();
  for (let i = 0; i < group.length; i += 100) {
    await b.platform.run(b.dbName, { uid: b.agentUid }, async () => {
      for (const v of group.slice(i, i + 100)) {
        const record = (await LiveChatSession.query({ id: v.session }).first())! as unknown as { message_post(i: object): Promise<{ id: number }> };
        await record.message_post({ content: `<p>While you were away, ${v.session}</p>` });
      }
    });
  }
  const writtenS = (performance.now() - writing) / 1000;
  await sleep(500);
  // All at once, spread over both workers, each with the newest id it had.
  const reconnecting = performance.now();
  const halves = [group.filter((_, i) => i % 2 === 0), group.filter((_, i) => i % 2 === 1)];
  await Promise.all(b.ff.map((s, i) => connectVisitors(s.port, b.dbName, halves[i]!, (v) => had.get(v) || undefined, halves[i]!.length)));
  const recoveredS = (performance.now() - reconnecting) / 1000;
  await sleep(1_000);
  let exact = 0;
  let lost = 0;
  let twice = 0;
  for (const v of group) {
    const got = v.ids.slice(before.get(v)!);
    const unique = new Set(v.ids);
    if (unique.size !== v.ids.length) twice++;
    if (got.length === 0) lost++;
    if (got.length === 1 && got[0]! > had.get(v)!) exact++;
  }
  for (const v of group) v.ws?.terminate();

  const bareReconnect = performance.now();
  const bareSockets = await Promise.all(group.map((_, i) => openSocket(`ws://127.0.0.1:${b.bare[i % 2]!.port}/`, { authorization: 'Bearer bare' })));
  const bareS = (performance.now() - bareReconnect) / 1000;
  for (const s of bareSockets) s.ws.terminate();

  console.log(`\n(c) ${group.length.toLocaleString('en')} visitors cut off at once, an agent's reply to each written meanwhile (${fmt(writtenS)} s), then all reconnecting at once over 2 workers with their after_id`);
  console.log(`  FieldForge: every history received in ${fmt(recoveredS, 2)} s; exactly the missed reply: ${exact} of ${group.length}; lost: ${lost}; duplicated: ${twice}`);
  console.log(`  bare: ${group.length.toLocaleString('en')} sockets reconnecting at once (hello only) in ${fmt(bareS, 2)} s   FieldForge / bare: ${fmt(recoveredS / bareS, 2)}×   (load average now ${fmt(loadavg()[0]!)})`);
}

// -----------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dbName = `ffbench_livechat_${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const engine = new PostgresEngine({ url: BASE_URL });
  const started: ServerProcess[] = [];
  let platform: Platform | null = null;
  let redis: TestRedis | null = null;
  const load0 = loadavg();
  try {
    log(`creating ${dbName} (livechat)…`);
    await createBenchDatabaseWithKeys(engine, dbName, ['livechat'], [{ name: 'livechat benchmark', groups: ['core.group_admin', 'core.group_user'] }]);
    platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]), secret);
    const p = platform;
    const agent = await p.run(dbName, {}, async () => {
      const groups = await Group.query({ identifier__in: ['core.group_user', 'livechat.group_agent'] }).ids();
      const user = await User.create({ name: 'Bench Agent', email: 'agent@bench.test', groups });
      return { uid: user.id, token: (await openSession(user.id, { dbName, secret, sessionHours: 8 })).access_token };
    });
    log(`starting ${VISITORS} sessions…`);
    const creating = performance.now();
    const visitors: Visitor[] = [];
    for (let i = 0; i < VISITORS; i += 200) {
      await p.run(dbName, {}, async () => {
        for (let k = i; k < Math.min(VISITORS, i + 200); k++) {
          const s = await LiveChatSession.visitor_start(`Visitor ${k}`, null);
          visitors.push({ session: s.session_id, token: s.token, ws: null, ids: [] });
        }
      });
    }
    log(`  in ${fmt((performance.now() - creating) / 1000)} s`);
    p.forget(dbName);
    await engine.closeDatabase(dbName);

    redis = await TestRedis.start();
    const prefix = `ffbench${randomBytes(3).toString('hex')}:`;
    const env = { DATABASE_URL: BASE_URL, BENCH_DB: dbName, REDIS_URL: redis.url, FF_REDIS_PREFIX: prefix, FF_SECRET: secret, FF_LIVECHAT_MESSAGES_PER_MINUTE: '1000' };
    const servers = await Promise.all([
      startServerProcess('bench/fieldforge-server.ts', env, ['--expose-gc']), startServerProcess('bench/fieldforge-server.ts', env, ['--expose-gc']),
      startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare', REDIS_URL: redis.url, BENCH_CHANNEL: `${prefix}bare` }, ['--expose-gc']),
      startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare', REDIS_URL: redis.url, BENCH_CHANNEL: `${prefix}bare` }, ['--expose-gc']),
    ]);
    started.push(...servers);
    const [ff1, ff2, bare1, bare2] = servers as [ServerProcess, ServerProcess, ServerProcess, ServerProcess];
    // Warm-up: a socket and a post on each worker, so code paths and caches are in place.
    for (const s of [ff1, ff2]) {
      const { ws } = await openSocket(visitorUrl(s.port, dbName, visitors[0]!));
      ws.close();
    }
    await sleep(500);
    const b: Bench = { dbName, secret, platform: p, visitors, agentToken: agent.token, agentUid: agent.uid, ff: [ff1, ff2], bare: [bare1, bare2] };
    console.log(`\nLive chat; ${availableParallelism()} CPUs, load average ${load0.map((l) => fmt(l)).join(' ')} at the start.`);
    if (CASES.includes('a')) await caseA(b);
    if (CASES.includes('b')) await caseB(b);
    if (CASES.includes('c')) await caseC(b);
    for (const v of visitors) v.ws?.terminate();
  } finally {
    for (const s of started) await stopServerProcess(s).catch(() => {});
    await redis?.stop().catch(() => {});
    platform?.forget(dbName);
    await engine.closeDatabase(dbName).catch(() => {});
    if (!KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await (platform ? platform.close() : engine.close()).catch(() => {});
  }
}

await main();
