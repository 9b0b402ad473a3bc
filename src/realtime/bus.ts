/**
 * The realtime bus (CONTRACTS C4 "Delivery"): how a frame for a user reaches the worker holding
 * the user's sockets, and where presence and the socket counts live. Two adapters: in-process
 * (one worker, `in-process-bus.ts`) and Redis pub/sub (`REDIS_URL`, `redis-bus.ts`). The platform
 * owns one; each worker's socket hub subscribes to it.
 *
 * `publish` never throws and never returns a promise: a push is fire-and-forget, so a write or a
 * request never waits for it or fails because of it (a failure is logged by the adapter).
 */
import type { SocketCounts } from './socket-counts.js';
import type { WatchGate } from './watch-gate.js';

/** Who receives a frame, within one database. */
export type Recipients =
  /** Every socket of this user (its tabs, on any worker). */
  | { readonly user: number }
  /** Every socket of each of these users (one message, however many: a message's audience). */
  | { readonly users: readonly number[] }
  /** Every socket of a person (a session, not an API key) other than this user's (presence). */
  | { readonly peopleExcept: number }
  /**
   * The sockets watching each of these records, except those of the editing session (record-changed
   * pings, `record-changed.ts`): each watcher of a record gets `frame` with the record's own
   * `model`, `id`, `fields` and `updated_date` added to its data. Many records travel as one message.
   */
  | { readonly watchers: readonly WatchedChange[]; readonly exceptSession: number | null }
  /**
   * The sockets watching one record, except those of these users (a message on the record goes
   * as `record_message` to its viewers who were not notified of it as followers).
   */
  | { readonly viewersOf: { readonly model: string; readonly id: number }; readonly exceptUsers: readonly number[] };

/** One changed record of a record-changed message. */
export interface WatchedChange {
  readonly model: string;
  readonly id: number;
  readonly fields: readonly string[];
  readonly updated_date: string;
}

/** One push: a frame for some sockets of one database. */
export type BusMessage = PersonBusMessage | VisitorBusMessage;

/** A frame for sockets of the main endpoint (`socket-hub.ts`). */
export interface PersonBusMessage {
  readonly db: string;
  readonly to: Recipients;
  /** The frame as sent to the client, `{type, data}`. */
  readonly frame: ServerFrame;
}

/** A frame for the live-chat visitor sockets of one session (`visitor-hub.ts`). */
export interface VisitorBusMessage {
  readonly db: string;
  readonly to: { readonly visitorsOf: number };
  readonly frame: VisitorFrame;
}

export function isVisitorMessage(message: BusMessage): message is VisitorBusMessage {
  return 'visitorsOf' in message.to;
}

/**
 * A server → visitor frame of the live-chat socket (spec §6.4): `{type: 'message', message}` for a
 * public message of the session, `{type: 'closed'}` when the session ends (the history is sent by
 * the hub itself).
 */
export interface VisitorFrame {
  readonly type: 'message' | 'closed';
  readonly [field: string]: unknown;
}

/** A server → client frame (C4). */
export interface ServerFrame {
  readonly type: 'realtime_data' | 'notification' | 'activity_update' | 'error';
  readonly data: Readonly<Record<string, unknown>>;
}

export type BusListener = (message: BusMessage) => void;

export interface Bus {
  /** Sends `message` to every subscribed worker (this one included); never throws. */
  publish(message: BusMessage): void;
  /**
   * Calls `listener` with every message of a database `wants(db)` answers true for (a worker asks
   * only for databases it holds sockets of, so it skips the others before parsing them).
   * Returns the unsubscribe function.
   */
  subscribe(listener: BusListener, wants: (db: string) => boolean): () => void;
  readonly presence: PresenceStore;
  /** The per-database gate of record-changed pings (`watch-gate.ts`). */
  readonly watchGate: WatchGate;
  /** The open sockets of each user and API key, over every worker (`socket-counts.ts`). */
  readonly socketCounts: SocketCounts;
  close(): Promise<void>;
}

/** One socket's presence entry: its user and a key unique across workers. */
export interface PresenceEntry {
  readonly uid: number;
  readonly socket: string;
}

/**
 * Who is online, per database (spec §6.2): a user is online while any of their person sockets,
 * on any worker, was touched less than its lifetime ago. Transitions are answered exactly once
 * across workers, so each is pushed once.
 */
export interface PresenceStore {
  /** Marks the sockets alive for `ttlMs` from now; answers the users that were offline before. */
  touch(db: string, entries: readonly PresenceEntry[], ttlMs: number): Promise<number[]>;
  /** Forgets a socket; answers true when its user has no live socket left (went offline now). */
  leave(db: string, entry: PresenceEntry): Promise<boolean>;
  /** Users whose every socket's lifetime ran out, each answered once (then offline). */
  lapse(db: string): Promise<number[]>;
  /** The online users, ascending. */
  online(db: string): Promise<number[]>;
}
