/**
 * A worker's sockets of the main realtime endpoint (CONTRACTS C4), by database and user: it
 * registers a socket once its upgrade is authenticated, answers its frames, delivers what the
 * bus brings, and keeps presence. One sweep per worker every `checkIntervalMs`, never a timer per
 * socket, does the periodic work of every socket at once, per database:
 *
 * * the credential re-check: one query for all the database's sockets (`auth/live-credentials.ts`);
 *   a revoked key or session, a sign-out or a deactivated user closes its sockets with 4001;
 * * presence: the heartbeats received since the last sweep refresh their sockets' lifetime in one
 *   call, and users whose sockets all lapsed are pushed offline;
 * * every `pingIntervalMs`, a WebSocket ping, and peers that did not answer the last are dropped;
 * * the per-database gate of record-changed pings (`watch-gate.ts`) is kept lit for every database
 *   this worker holds watches of;
 * * this worker's lease on its socket counts (`socket-quota.ts`) is renewed.
 *
 * Limits (CONTRACTS C4): a socket over its user's or API key's most open sockets, counted over
 * every worker, gets an `error` frame (`error: 'TooManySockets'`) and is closed with 4029 before
 * `hello`, without counting in presence; a `watch` over the socket's most watches is answered with
 * an `error` frame (`error: 'TooManyWatches'`) and the socket stays open.
 *
 * Record-changed pings (CONTRACTS C4): a bus message names changed records; each goes to this
 * worker's sockets watching it, except the editing session's. Where writers may act on a stale
 * gate (several workers), a watch made within `staleMs` of the gate's lighting is caught up once
 * every writer's cached answer has expired: the record is read again and, when its `updated_date`
 * moved past the last one the socket was told of, the socket gets the ping it may have missed.
 */
import { randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { RawData, WebSocket } from 'ws';
import { liveCredentials } from '../auth/live-credentials.js';
import { AuthenticationError } from '../errors.js';
import type { WatchedState } from '../api/watch-target.js';
import { isVisitorMessage, type Bus, type BusMessage, type PresenceEntry, type ServerFrame, type WatchedChange } from './bus.js';
import { parseClientFrame } from './client-frames.js';
import { CLOSE_REVOKED, CLOSE_TOO_MANY_SOCKETS, SocketClient, type FloodLimits, type SocketOwner } from './socket-client.js';
import { SocketQuota } from './socket-quota.js';
import { WatchRegistry } from './watch-registry.js';

export interface HubOptions {
  /** A database's connection pool, for the credential re-check. */
  openDatabase(name: string): Promise<SqlExecutor>;
  /** Frames a second per socket before it counts as flooding (`FF_WS_RATE`, 50). */
  framesPerSecond?: number;
  /** Seconds of flooding in a row before the socket is closed with 1008 (`FF_WS_FLOOD_SECONDS`, 3). */
  floodSeconds?: number;
  /** How often the sweep runs (credential re-check, presence), ms (2,000: revocation closes within 5 s). */
  checkIntervalMs?: number;
  /** Presence lifetime of a socket without heartbeat, ms (spec §6.2: about 35 s). */
  presenceTtlMs?: number;
  /** WebSocket ping interval, ms (30 s); a peer that misses one is dropped. */
  pingIntervalMs?: number;
  /** Most records one socket may watch at once (`FF_WS_MAX_WATCHES`, 200). */
  maxWatches?: number;
  /** Most open sockets of one user, over every worker (`FF_WS_MAX_SOCKETS_PER_USER`, 50). */
  maxSocketsPerUser?: number;
  /** Most open sockets of one API key, over every worker (`FF_WS_MAX_SOCKETS_PER_KEY`, the user limit). */
  maxSocketsPerKey?: number;
  /**
   * How long the other workers count this worker's sockets without hearing from it, ms (renewed by
   * each sweep; 15 s): the sockets of a worker that crashed free their places after this.
   */
  socketLeaseMs?: number;
  /** Most bytes waiting to be sent to one socket before it is closed (1013). */
  maxBacklogBytes?: number;
  /** Lifetime of the record-changed gate this worker lights, ms (refreshed by each sweep; 10 s). */
  gateTtlMs?: number;
  /** Wait beyond the gate's staleness before a watch is caught up, ms (500). */
  catchUpMarginMs?: number;
}

/** A watch made while writers may still act on a stale gate, to be caught up at `due`. */
interface CatchUp {
  readonly client: SocketClient;
  readonly model: string;
  readonly id: number;
  readonly state: WatchedState;
  /** The last `updated_date` the socket was told of (a ping delivered meanwhile moves it). */
  seen: string | null;
  readonly due: number;
}

interface DatabaseSockets {
  readonly all: Set<SocketClient>;
  readonly byUser: Map<number, Set<SocketClient>>;
  readonly watches: WatchRegistry;
}

/** A frame of the realtime_data type. */
export function realtimeFrame(event: string, data: Record<string, unknown>): ServerFrame {
  return { type: 'realtime_data', data: { event, ...data } };
}

export class SocketHub {
  /** This worker's mark, unique across workers (socket keys; the upgrade's `X-FF-Worker` header). */
  readonly id = randomBytes(6).toString('hex');
  #seq = 0;
  readonly #databases = new Map<string, DatabaseSockets>();
  readonly #limits: FloodLimits;
  readonly #checkMs: number;
  readonly #ttlMs: number;
  readonly #pingMs: number;
  readonly #maxWatches: number;
  readonly #maxBacklog: number;
  readonly #gateTtlMs: number;
  readonly #catchUpMarginMs: number;
  readonly #quota: SocketQuota;
  readonly #unsubscribe: () => void;
  /** Per database with watches here: since when this worker's gate has been lit (epoch ms). */
  readonly #litSince = new Map<string, number>();
  /** Watches to catch up, by `db:model:id`, and the one timer that runs them. */
  readonly #catchUps = new Map<string, CatchUp[]>();
  #catchUpTimer: NodeJS.Timeout | null = null;
  #timer: NodeJS.Timeout | null = null;
  #sweeping = false;
  #pingedAt = Date.now();
  /** Presence work still under way (a socket leaving), awaited on shutdown. */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(private readonly bus: Bus, private readonly options: HubOptions) {
    this.#limits = { framesPerSecond: options.framesPerSecond ?? 50, seconds: options.floodSeconds ?? 3 };
    this.#checkMs = options.checkIntervalMs ?? 2_000;
    this.#ttlMs = options.presenceTtlMs ?? 35_000;
    this.#pingMs = options.pingIntervalMs ?? 30_000;
    this.#maxWatches = options.maxWatches ?? 200;
    this.#maxBacklog = options.maxBacklogBytes ?? 1024 * 1024;
    this.#gateTtlMs = options.gateTtlMs ?? Math.max(10_000, 3 * this.#checkMs);
    this.#catchUpMarginMs = options.catchUpMarginMs ?? 500;
    const perUser = options.maxSocketsPerUser ?? 50;
    const limits = { perUser, perKey: options.maxSocketsPerKey ?? perUser };
    this.#quota = new SocketQuota(bus.socketCounts, this.id, limits, options.socketLeaseMs ?? Math.max(15_000, 5 * this.#checkMs));
    this.#unsubscribe = bus.subscribe((m) => this.#deliver(m), (db) => this.#databases.has(db));
  }

  /**
   * Takes an authenticated socket: its place under the socket limits first (refused, it is closed
   * with 4029 after an `error` frame, and nobody hears of it), then presence (a person is online
   * before anyone hears of it), then registration and `hello` in one step, so `hello` is the first
   * frame it receives.
   */
  async connect(ws: WebSocket, owner: SocketOwner): Promise<void> {
    const client = new SocketClient(ws, owner, `${this.id}:${++this.#seq}`);
    let registered: () => void = () => undefined;
    client.queue = new Promise<void>((resolve) => (registered = resolve));
    ws.on('message', (data, isBinary) => this.#receive(client, data, isBinary));
    ws.on('pong', () => (client.alive = true));
    ws.on('close', () => this.#track(this.#disconnect(client)));
    const refusal = await this.#quota.admit(owner);
    if (refusal !== null) {
      client.sendFrame({ type: 'error', data: { detail: refusal, error: 'TooManySockets' } });
      client.close(CLOSE_TOO_MANY_SOCKETS, 'Too many sockets');
      return;
    }
    if (client.isPerson) {
      const cameOnline = await this.#presence(() => this.bus.presence.touch(owner.db, [entryOf(client)], this.#ttlMs), []);
      for (const uid of cameOnline) this.#publishPresence(owner.db, uid, true);
    }
    if (ws.readyState !== ws.OPEN) {
      client.closed = true;
      this.#track(this.#quota.release(owner));
      if (client.isPerson) this.#track(this.#leave(client));
      return;
    }
    this.#register(client);
    client.sendFrame(realtimeFrame('hello', { user_id: owner.uid, db: owner.db }));
    registered();
    this.#timer ??= setInterval(() => void this.#sweep(), this.#checkMs).unref();
  }

  /** The sockets watching a record on this worker (CONTRACTS C4 record-changed pings). */
  watchersOf(db: string, model: string, id: number): ReadonlySet<SocketClient> {
    return this.#databases.get(db)?.watches.of(model, id) ?? EMPTY;
  }

  /** True when some socket of this worker watches a record of `db`. */
  hasWatchers(db: string): boolean {
    return (this.#databases.get(db)?.watches.size ?? 0) > 0;
  }

  /** Open sockets on this worker (all databases). */
  get size(): number {
    let n = 0;
    for (const d of this.#databases.values()) n += d.all.size;
    return n;
  }

  /** Closes every socket (1001) and waits, briefly, for their presence to be cleared. */
  async stop(): Promise<void> {
    this.#unsubscribe();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#catchUpTimer) clearTimeout(this.#catchUpTimer);
    this.#catchUpTimer = null;
    this.#catchUps.clear();
    for (const d of this.#databases.values()) for (const c of d.all) c.close(1001, 'Server shutting down');
    await Promise.race([Promise.allSettled([...this.#pending]), new Promise((r) => setTimeout(r, 1_000).unref())]);
  }

  #register(client: SocketClient): void {
    const { db, uid } = client.owner;
    let d = this.#databases.get(db);
    if (!d) this.#databases.set(db, (d = { all: new Set(), byUser: new Map(), watches: new WatchRegistry() }));
    d.all.add(client);
    let mine = d.byUser.get(uid);
    if (!mine) d.byUser.set(uid, (mine = new Set()));
    mine.add(client);
  }

  async #disconnect(client: SocketClient): Promise<void> {
    client.closed = true;
    const { db, uid } = client.owner;
    const d = this.#databases.get(db);
    if (!d?.all.delete(client)) return; // never registered (closed during its upgrade)
    d.watches.forget(client);
    if (!d.watches.size) this.#dim(db);
    const mine = d.byUser.get(uid);
    mine?.delete(client);
    if (mine && !mine.size) d.byUser.delete(uid);
    if (!d.all.size) this.#databases.delete(db);
    await Promise.all([this.#quota.release(client.owner), client.isPerson ? this.#leave(client) : undefined]);
  }

  async #leave(client: SocketClient): Promise<void> {
    const wentOffline = await this.#presence(() => this.bus.presence.leave(client.owner.db, entryOf(client)), false);
    if (wentOffline) this.#publishPresence(client.owner.db, client.owner.uid, false);
  }

  #receive(client: SocketClient, data: RawData, isBinary: boolean): void {
    const now = Date.now();
    if (client.closed || !client.admit(this.#limits, now)) return;
    if (isBinary) return this.#refuse(client, 'Frames are JSON text, not binary');
    const frame = parseClientFrame(data.toString());
    if ('error' in frame) return this.#refuse(client, frame.error);
    switch (frame.type) {
      case 'heartbeat':
        client.heartbeatAt = now;
        return;
      case 'watch':
      case 'unwatch': {
        const { type, model, id } = frame;
        client.queue = client.queue.then(() => (type === 'watch' ? this.#watch(client, model, id) : this.#unwatch(client, model, id)));
        return;
      }
    }
  }

  async #watch(client: SocketClient, model: string, id: number): Promise<void> {
    if (client.closed) return;
    if (client.watches.size >= this.#maxWatches && !client.watches.has(`${model}:${id}`)) {
      const detail = `Cannot watch ${model} ${id}: a socket may watch at most ${this.#maxWatches} records (FF_WS_MAX_WATCHES); unwatch one first`;
      return this.#refuse(client, detail, { error: 'TooManyWatches', model, id });
    }
    const db = client.owner.db;
    // The gate first: a write after the read below is then either reported or caught up.
    await this.#light(db);
    const catchUpAt = this.#catchUpDue(db);
    let state: WatchedState | null = null;
    try {
      if (catchUpAt === null) await client.owner.assertReadable(model, id);
      else state = await client.owner.readWatched(model, id);
    } catch (err) {
      if (!this.#databases.get(db)?.watches.size) this.#dim(db);
      if (err instanceof AuthenticationError) return client.close(CLOSE_REVOKED, 'Credential revoked');
      return this.#refuse(client, `Cannot watch ${model} ${id}: ${(err as Error).message}`);
    }
    const d = this.#databases.get(db);
    if (client.closed || !d) return;
    d.watches.add(client, model, id);
    if (state && catchUpAt !== null) this.#scheduleCatchUp({ client, model, id, state, seen: state.updatedDate, due: catchUpAt });
  }

  async #unwatch(client: SocketClient, model: string, id: number): Promise<void> {
    const d = this.#databases.get(client.owner.db);
    d?.watches.remove(client, model, id);
    if (d && !d.watches.size) this.#dim(client.owner.db);
  }

  /** Lights (or keeps lit) the gate of `db`; best effort — with Redis away the bus logs it. */
  async #light(db: string): Promise<void> {
    try {
      await this.bus.watchGate.light(db, this.#gateTtlMs);
      if (!this.#litSince.has(db)) this.#litSince.set(db, Date.now());
    } catch {
      // the bus logs its own connection failures
    }
  }

  /** This worker watches nothing more of `db`. */
  #dim(db: string): void {
    this.#litSince.delete(db);
    this.bus.watchGate.dim(db);
  }

  /** When a watch made now must be caught up: null when every writer already sees the gate lit. */
  #catchUpDue(db: string): number | null {
    const stale = this.bus.watchGate.staleMs;
    const since = this.#litSince.get(db);
    if (!stale || since === undefined) return null;
    const due = since + stale + this.#catchUpMarginMs;
    return due > Date.now() ? due : null;
  }

  #scheduleCatchUp(entry: CatchUp): void {
    const key = `${entry.client.owner.db}:${entry.model}:${entry.id}`;
    const list = this.#catchUps.get(key) ?? this.#catchUps.set(key, []).get(key)!;
    list.push(entry);
    this.#armCatchUps();
  }

  #armCatchUps(): void {
    if (this.#catchUpTimer || !this.#catchUps.size) return;
    let next = Infinity;
    for (const list of this.#catchUps.values()) for (const e of list) next = Math.min(next, e.due);
    this.#catchUpTimer = setTimeout(() => void this.#runCatchUps(), Math.max(0, next - Date.now())).unref();
  }

  async #runCatchUps(): Promise<void> {
    this.#catchUpTimer = null;
    const now = Date.now();
    const due: CatchUp[] = [];
    for (const [key, list] of this.#catchUps) {
      const later = list.filter((e) => e.due > now);
      due.push(...list.filter((e) => e.due <= now));
      if (later.length) this.#catchUps.set(key, later);
      else this.#catchUps.delete(key);
    }
    this.#armCatchUps();
    await Promise.all(due.map((e) => this.#catchUp(e)));
  }

  /** Pings the socket when the record moved since the last `updated_date` it was told of. */
  async #catchUp(entry: CatchUp): Promise<void> {
    const { client, model, id } = entry;
    if (client.closed || !client.watches.has(`${model}:${id}`)) return;
    let now: WatchedState;
    try {
      now = await client.owner.readWatched(model, id);
    } catch {
      return; // no longer readable (or gone): nothing to offer a reload of
    }
    if (toldOf(entry.seen, now.updatedDate)) return;
    // A write committed just now may have its ping on the way: give it the margin to arrive.
    await new Promise((resolve) => setTimeout(resolve, this.#catchUpMarginMs));
    if (toldOf(entry.seen, now.updatedDate) || client.closed || !client.watches.has(`${model}:${id}`)) return;
    const before = entry.state.values;
    const fields = Object.keys(now.values).filter((f) => JSON.stringify(now.values[f]) !== JSON.stringify(before[f]));
    client.sendFrame({
      type: 'activity_update',
      data: { kind: 'record_changed', model, id, fields, updated_by: now.updatedBy, updated_date: now.updatedDate },
    });
  }

  /** An `error` frame; `more` names a refusal a client may act on (`error`: its kind). */
  #refuse(client: SocketClient, detail: string, more: Record<string, unknown> = {}): void {
    client.sendFrame({ type: 'error', data: { detail, ...more } });
  }

  #deliver(message: BusMessage): void {
    if (isVisitorMessage(message)) return; // the visitor hub's
    const d = this.#databases.get(message.db);
    if (!d) return;
    let text: string | undefined;
    const send = (c: SocketClient) => c.send((text ??= JSON.stringify(message.frame)), this.#maxBacklog);
    const to = message.to;
    if ('user' in to) {
      for (const c of d.byUser.get(to.user) ?? EMPTY) send(c);
    } else if ('users' in to) {
      for (const uid of to.users) for (const c of d.byUser.get(uid) ?? EMPTY) send(c);
    } else if ('peopleExcept' in to) {
      for (const c of d.all) if (c.isPerson && c.owner.uid !== to.peopleExcept) send(c);
    } else if ('watchers' in to) {
      for (const change of to.watchers) this.#deliverChange(message.db, d, message.frame, change, to.exceptSession);
    } else if ('viewersOf' in to) {
      const except = new Set(to.exceptUsers);
      for (const c of d.watches.of(to.viewersOf.model, to.viewersOf.id) ?? EMPTY) if (!except.has(c.owner.uid)) send(c);
    }
  }

  /** One record's `record_changed` frame to its watchers here, except the editing session's sockets. */
  #deliverChange(db: string, d: DatabaseSockets, frame: ServerFrame, change: WatchedChange, exceptSession: number | null): void {
    const { model, id, fields, updated_date } = change;
    // Told (or, for the editor, the author): a pending catch-up need not ping for this write again.
    for (const e of this.#catchUps.get(`${db}:${model}:${id}`) ?? []) e.seen = updated_date;
    const watchers = d.watches.of(model, id);
    if (!watchers) return;
    const text = JSON.stringify({ type: frame.type, data: { ...frame.data, model, id, fields, updated_date } });
    for (const c of watchers) if (exceptSession === null || c.owner.sessionId !== exceptSession) c.send(text, this.#maxBacklog);
  }

  #publishPresence(db: string, uid: number, online: boolean): void {
    this.bus.publish({ db, to: { peopleExcept: uid }, frame: realtimeFrame('presence', { user_id: uid, online }) });
  }

  async #sweep(): Promise<void> {
    // Apart from the rest: a slow credential re-check must not let this worker's socket counts lapse.
    if (this.#databases.size) void this.#quota.renewAll(this.#databases.keys());
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      if (!this.#databases.size && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = null;
        return;
      }
      const now = Date.now();
      const ping = now - this.#pingedAt >= this.#pingMs;
      if (ping) this.#pingedAt = now;
      await Promise.all([...this.#databases].map(([db, d]) => this.#sweepDatabase(db, d, ping)));
    } finally {
      this.#sweeping = false;
    }
  }

  async #sweepDatabase(db: string, d: DatabaseSockets, ping: boolean): Promise<void> {
    const clients = [...d.all];
    if (d.watches.size) void this.#light(db);
    if (ping) {
      for (const c of clients) {
        if (!c.alive) {
          c.ws.terminate();
          continue;
        }
        c.alive = false;
        c.ws.ping();
      }
    }
    await Promise.all([this.#recheckCredentials(db, clients), this.#refreshPresence(db, clients)]);
  }

  async #recheckCredentials(db: string, clients: SocketClient[]): Promise<void> {
    const sessions = new Set<number>();
    const keys = new Set<string>();
    for (const c of clients) {
      if (c.owner.sessionId !== null) sessions.add(c.owner.sessionId);
      if (c.owner.keyHash !== null) keys.add(c.owner.keyHash);
    }
    let live;
    try {
      live = await liveCredentials(await this.options.openDatabase(db), [...sessions], [...keys]);
    } catch (err) {
      console.error(`realtime: credential re-check of database '${db}' failed: ${(err as Error).message}`);
      return;
    }
    for (const c of clients) {
      const { sessionId, keyHash } = c.owner;
      const holds = sessionId !== null ? live.sessions.has(sessionId) : keyHash !== null && live.keyHashes.has(keyHash);
      if (!holds) c.close(CLOSE_REVOKED, 'Credential revoked');
    }
  }

  async #refreshPresence(db: string, clients: SocketClient[]): Promise<void> {
    const heard = clients.filter((c) => c.isPerson && !c.closed && c.heartbeatAt > c.touchedAt);
    for (const c of heard) c.touchedAt = c.heartbeatAt;
    const cameOnline = await this.#presence(() => this.bus.presence.touch(db, heard.map(entryOf), this.#ttlMs), []);
    for (const uid of cameOnline) this.#publishPresence(db, uid, true);
    const wentOffline = await this.#presence(() => this.bus.presence.lapse(db), []);
    for (const uid of wentOffline) this.#publishPresence(db, uid, false);
  }

  /** Presence is best effort: with Redis away it is rebuilt from the heartbeats after it returns. */
  async #presence<T>(work: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await work();
    } catch {
      return fallback; // the bus logs its own connection failures
    }
  }

  #track(work: Promise<unknown>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }
}

const EMPTY: ReadonlySet<SocketClient> = new Set();

/** Whether a socket told of `seen` knows of the write stamped `current` (or a later one). */
function toldOf(seen: string | null, current: string | null): boolean {
  return seen === current || (seen !== null && current !== null && Date.parse(seen) >= Date.parse(current));
}

function entryOf(c: SocketClient): PresenceEntry {
  return { uid: c.owner.uid, socket: c.key };
}
