/**
 * A worker's live-chat visitor sockets (spec §6.4, CONTRACTS C5 "Live chat"), by database and
 * session. A socket is registered before its history is read, and frames that arrive meanwhile are
 * held: once `history` (the public messages after the `after_id` the widget already has) is sent,
 * the held frames follow, those already in the history left out — so a reconnect misses nothing
 * and repeats nothing, in order. Every later `message` of the session, from any worker, comes
 * through the bus; a message id a socket already has is never sent to it again.
 *
 * Presence: a session is online while any of its sockets, on any worker, is open (the bus's
 * presence store, under a key of its own per database, answers each transition once over every
 * worker); closing the last socket takes it offline at once. One sweep every `checkIntervalMs`
 * refreshes the open sockets' lifetime (a crashed worker's lapse), writes `last_seen` for the
 * sessions that sent a heartbeat, and pings. Presence and typing are written in batches, and
 * history reads queue past a few at once (`visitor-bookkeeping.ts`). `typing` is passed on at most once per
 * `typingIntervalMs` per socket; a socket sending more than `framesPerSecond` for `floodSeconds`
 * in a row is closed (1008), and so is a session's socket past `maxSocketsPerSession` on a worker.
 */
import { randomBytes } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { VisitorHistory, VisitorMessage } from '../api/livechat.js';
import { isVisitorMessage, type Bus, type BusMessage, type PresenceEntry, type VisitorFrame } from './bus.js';
import { VisitorBookkeeping, type VisitorWrites } from './visitor-bookkeeping.js';

/** The live-chat operations the hub calls, each in its own unit of work of database `db` (presence and typing of many sessions at once). */
export interface VisitorSessions extends VisitorWrites {
  history(db: string, sessionId: number, afterId: number | null): Promise<VisitorHistory>;
  seen(db: string, sessionIds: readonly number[]): Promise<void>;
  /** The signed URL the visitor opens attachment `id` with (no cookie reaches our host from its page). */
  attachmentUrl(db: string, id: number): string;
}

export interface VisitorHubOptions {
  sessions: VisitorSessions;
  checkIntervalMs?: number;
  pingIntervalMs?: number;
  typingIntervalMs?: number;
  framesPerSecond?: number;
  floodSeconds?: number;
  maxBacklogBytes?: number;
  /** Presence and typing of all sessions within this window are written together (25 ms). */
  flushMs?: number;
  /** History reads at once on this worker (4); more wait their turn. */
  maxReads?: number;
  /** Sockets of one session on this worker (10: a visitor's tabs); one more is closed with 1008. */
  maxSocketsPerSession?: number;
  log?: (message: string, error?: unknown) => void;
}

/** The socket's chat ended: the widget offers a new one instead of reconnecting. */
export const CLOSE_CHAT_ENDED = 4000;

class VisitorSocket {
  /** Frames come in while the history is read: held, then sent after it. */
  held: VisitorFrame[] | null = [];
  /** The newest message id this socket has (from its `after_id`, its history, its frames). */
  lastId: number;
  heartbeat = false;
  alive = true;
  closed = false;
  typingAt = 0;
  #second = 0;
  #frames = 0;
  #floodSeconds = 0;

  constructor(readonly ws: WebSocket, readonly db: string, readonly sessionId: number, readonly key: string, afterId: number | null) {
    this.lastId = afterId ?? 0;
  }

  /** Counts a frame; false when over this second's allowance (and closes a socket flooding too long). */
  admit(perSecond: number, seconds: number, now: number): boolean {
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#floodSeconds = this.#frames > perSecond ? this.#floodSeconds + 1 : 0;
      this.#second = second;
      this.#frames = 0;
    }
    if (++this.#frames <= perSecond) return true;
    if (this.#floodSeconds + 1 >= seconds) this.ws.close(1008, 'Too many frames');
    return false;
  }
}

export class VisitorHub {
  readonly id = randomBytes(6).toString('hex');
  #seq = 0;
  /** db → session id → its sockets on this worker. */
  readonly #databases = new Map<string, Map<number, Set<VisitorSocket>>>();
  readonly #sessions: VisitorSessions;
  readonly #checkMs: number;
  readonly #pingMs: number;
  readonly #typingMs: number;
  readonly #perSecond: number;
  readonly #floodSeconds: number;
  readonly #maxBacklog: number;
  readonly #log: (message: string, error?: unknown) => void;
  readonly #unsubscribe: () => void;
  readonly #pending = new Set<Promise<unknown>>();
  readonly #books: VisitorBookkeeping;
  readonly #maxPerSession: number;
  #timer: NodeJS.Timeout | null = null;
  #pingedAt = Date.now();

  constructor(private readonly bus: Bus, options: VisitorHubOptions) {
    this.#sessions = options.sessions;
    this.#checkMs = options.checkIntervalMs ?? 2_000;
    this.#pingMs = options.pingIntervalMs ?? 30_000;
    this.#typingMs = options.typingIntervalMs ?? 2_000;
    this.#perSecond = options.framesPerSecond ?? 20;
    this.#floodSeconds = options.floodSeconds ?? 3;
    this.#maxBacklog = options.maxBacklogBytes ?? 1024 * 1024;
    this.#log = options.log ?? ((message, error) => console.error(message, error));
    this.#maxPerSession = options.maxSocketsPerSession ?? 10;
    this.#books = new VisitorBookkeeping(this.#sessions, {
      flushMs: options.flushMs ?? 25,
      maxReads: options.maxReads ?? 4,
      quietly: (fn) => this.#quietly(fn, undefined),
    });
    this.#unsubscribe = bus.subscribe((m) => this.#deliver(m), (db) => this.#databases.has(db));
  }

  /** Takes the socket of session `sessionId` (its token checked), sends its history, then its live frames. */
  async connect(ws: WebSocket, db: string, sessionId: number, afterId: number | null): Promise<void> {
    // One token must not hold a worker's memory: a visitor has a few tabs, a script thousands of sockets.
    if ((this.#databases.get(db)?.get(sessionId)?.size ?? 0) >= this.#maxPerSession) {
      ws.close(1008, 'Too many sockets for this chat');
      return;
    }
    const socket = new VisitorSocket(ws, db, sessionId, `${this.id}:${++this.#seq}`, afterId);
    ws.on('message', (data, isBinary) => this.#receive(socket, data, isBinary));
    ws.on('pong', () => (socket.alive = true));
    ws.on('close', () => this.#track(this.#disconnect(socket)));
    this.#register(socket);
    this.#timer ??= setInterval(() => void this.#sweep(), this.#checkMs).unref();
    const cameOnline = await this.#quietly(() => this.bus.presence.touch(presenceKey(db), [entryOf(socket)], this.#ttlMs()), []);
    if (cameOnline.length) this.#books.presence(db, sessionId, true);
    let history: VisitorHistory;
    try {
      history = await this.#books.read(() => this.#sessions.history(db, sessionId, afterId));
    } catch (err) {
      this.#log(`livechat: history of session ${sessionId} in ${db} could not be read`, err);
      ws.close(1011, 'History unavailable; reconnect');
      return;
    }
    if (socket.closed) return;
    const messages = history.messages.map((m) => this.#withUrls(db, m));
    for (const m of messages) socket.lastId = Math.max(socket.lastId, m.id);
    this.#send(socket, { type: 'history', messages, state: history.state, agents_online: history.agents_online });
    const held = socket.held ?? [];
    socket.held = null;
    for (const frame of held) this.#sendFrame(socket, frame);
  }

  /** Open visitor sockets on this worker (all databases). */
  get size(): number {
    let n = 0;
    for (const d of this.#databases.values()) for (const set of d.values()) n += set.size;
    return n;
  }

  async stop(): Promise<void> {
    this.#unsubscribe();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    for (const d of this.#databases.values()) for (const set of d.values()) for (const s of set) s.ws.close(1001, 'Server shutting down');
    await Promise.race([Promise.allSettled([...this.#pending]).then(() => this.#books.drain()), new Promise((r) => setTimeout(r, 1_000).unref())]);
  }

  #ttlMs(): number {
    return Math.max(10_000, 5 * this.#checkMs);
  }

  #register(socket: VisitorSocket): void {
    let d = this.#databases.get(socket.db);
    if (!d) this.#databases.set(socket.db, (d = new Map()));
    let set = d.get(socket.sessionId);
    if (!set) d.set(socket.sessionId, (set = new Set()));
    set.add(socket);
  }

  async #disconnect(socket: VisitorSocket): Promise<void> {
    socket.closed = true;
    const d = this.#databases.get(socket.db);
    const set = d?.get(socket.sessionId);
    if (!set?.delete(socket)) return;
    if (!set.size) d!.delete(socket.sessionId);
    if (!d!.size) this.#databases.delete(socket.db);
    const wentOffline = await this.#quietly(() => this.bus.presence.leave(presenceKey(socket.db), entryOf(socket)), false);
    if (wentOffline) this.#books.presence(socket.db, socket.sessionId, false);
  }

  #receive(socket: VisitorSocket, data: RawData, isBinary: boolean): void {
    const now = Date.now();
    if (socket.closed || !socket.admit(this.#perSecond, this.#floodSeconds, now)) return;
    let frame: unknown;
    try {
      frame = isBinary ? null : JSON.parse(data.toString());
    } catch {
      frame = null;
    }
    const type = frame !== null && typeof frame === 'object' ? (frame as { type?: unknown }).type : undefined;
    if (type === 'heartbeat') {
      socket.heartbeat = true;
    } else if (type === 'typing') {
      if (now - socket.typingAt < this.#typingMs) return;
      socket.typingAt = now;
      this.#books.typing(socket.db, socket.sessionId);
    } else {
      this.#send(socket, { type: 'error', detail: "Frames are JSON objects of type 'heartbeat' or 'typing'", error: 'BadFrame' });
    }
  }

  #deliver(message: BusMessage): void {
    if (!isVisitorMessage(message)) return;
    const set = this.#databases.get(message.db)?.get(message.to.visitorsOf);
    if (!set) return;
    for (const socket of set) {
      if (socket.held) socket.held.push(message.frame);
      else this.#sendFrame(socket, message.frame);
    }
  }

  /** A live frame: a message the socket already has is skipped; `closed` ends the socket. */
  #sendFrame(socket: VisitorSocket, frame: VisitorFrame): void {
    if (frame.type === 'message') {
      const message = frame.message as VisitorMessage;
      if (message.id <= socket.lastId) return;
      socket.lastId = message.id;
      this.#send(socket, { type: 'message', message: this.#withUrls(socket.db, message) });
    } else if (frame.type === 'closed') {
      this.#send(socket, { type: 'closed' });
      socket.ws.close(CLOSE_CHAT_ENDED, 'Chat closed');
    }
  }

  #withUrls(db: string, message: VisitorMessage): VisitorMessage {
    if (!message.attachments.length) return message;
    return { ...message, attachments: message.attachments.map((a) => ({ ...a, url: this.#sessions.attachmentUrl(db, a.id) })) };
  }

  #send(socket: VisitorSocket, frame: Record<string, unknown>): void {
    if (socket.closed || socket.ws.readyState !== socket.ws.OPEN) return;
    if (socket.ws.bufferedAmount > this.#maxBacklog) {
      socket.ws.close(1013, 'Too many unread frames');
      return;
    }
    socket.ws.send(JSON.stringify(frame));
  }

  async #sweep(): Promise<void> {
    const ping = Date.now() - this.#pingedAt >= this.#pingMs;
    if (ping) this.#pingedAt = Date.now();
    await Promise.all([...this.#databases].map(async ([db, sessions]) => {
      const entries: PresenceEntry[] = [];
      const seen: number[] = [];
      for (const [id, set] of sessions) {
        for (const s of set) {
          entries.push(entryOf(s));
          if (s.heartbeat) seen.push(id);
          s.heartbeat = false;
          if (ping) {
            if (!s.alive) s.ws.terminate();
            s.alive = false;
            s.ws.ping();
          }
        }
      }
      const key = presenceKey(db);
      const cameOnline = await this.#quietly(() => this.bus.presence.touch(key, entries, this.#ttlMs()), []);
      const lapsed = await this.#quietly(() => this.bus.presence.lapse(key), []);
      for (const id of cameOnline) this.#books.presence(db, id, true);
      for (const id of lapsed) this.#books.presence(db, id, false);
      if (seen.length) await this.#quietly(() => this.#sessions.seen(db, [...new Set(seen)]), undefined);
    }));
    if (!this.#databases.size && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  async #quietly<T>(fn: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      this.#log('livechat: visitor bookkeeping failed', err);
      return fallback;
    }
  }

  #track(p: Promise<unknown>): void {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }
}

/** Sessions' presence lives beside the users' under a key of its own, so neither sees the other's. */
function presenceKey(db: string): string {
  return `livechat:${db}`;
}

function entryOf(socket: VisitorSocket): PresenceEntry {
  return { uid: socket.sessionId, socket: socket.key };
}
