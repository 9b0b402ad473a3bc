/**
 * One open socket of the main realtime endpoint: whom it stands for, what it watches, and the
 * few numbers its flood control and heartbeat need. No timer of its own: the worker's hub sweeps
 * every socket at once (`socket-hub.ts`), so an idle socket costs this object and `ws`'s own.
 */
import type { WebSocket } from 'ws';
import type { WatchedState } from '../api/watch-target.js';
import type { ServerFrame } from './bus.js';

/** Who a socket stands for, as the upgrade request's credential resolved it. */
export interface SocketOwner {
  readonly db: string;
  readonly uid: number;
  /** The session of a person's socket; null for an API key. */
  readonly sessionId: number | null;
  /** The SHA-256 hash of an API key's socket (never the key); null for a session. */
  readonly keyHash: string | null;
  /**
   * Resolves when the owner, with its rights as of now, may read the record; throws the API's
   * error otherwise (`NotFound` for a record it cannot see, `AuthenticationError` once revoked).
   */
  assertReadable(model: string, id: number): Promise<void>;
  /** `assertReadable`, answering the record's state as the owner reads it now (stale-gate catch-up). */
  readWatched(model: string, id: number): Promise<WatchedState>;
}

/** Close codes of CONTRACTS C4 (1009, too large a frame, is sent by `ws` itself). */
export const CLOSE_REVOKED = 4001;
export const CLOSE_FLOOD = 1008;
/** The client does not read what it is sent and its backlog outgrew the bound. */
export const CLOSE_BACKLOG = 1013;
/** The socket's user or API key has the most open sockets it may have (after an `error` frame; 429 for HTTP). */
export const CLOSE_TOO_MANY_SOCKETS = 4029;

export interface FloodLimits {
  /** Frames a second a client may send without counting against it. */
  readonly framesPerSecond: number;
  /** Consecutive seconds over the rate after which the socket is closed with 1008. */
  readonly seconds: number;
}

export class SocketClient {
  /** Records watched, as `model:id`. */
  readonly watches = new Set<string>();
  /** When the client last sent a heartbeat (epoch ms), and when presence last heard of it. */
  heartbeatAt: number;
  touchedAt: number;
  /** Answered the last ping (dead peers are dropped by the hub's sweep). */
  alive = true;
  closed = false;
  /** Frames that need the database run one after another (a watch, then its unwatch). */
  queue: Promise<void> = Promise.resolve();
  #second = 0;
  #count = 0;
  #strikes = 0;
  #lastStrike = 0;

  constructor(
    readonly ws: WebSocket,
    readonly owner: SocketOwner,
    /** Unique across workers: presence tells this socket from the user's others. */
    readonly key: string,
  ) {
    this.heartbeatAt = this.touchedAt = Date.now();
  }

  /** A person's socket (a session): presence counts it. An API key's does not. */
  get isPerson(): boolean {
    return this.owner.sessionId !== null;
  }

  send(text: string, maxBacklog: number): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount > maxBacklog) {
      this.close(CLOSE_BACKLOG, 'Too many unread frames');
      return;
    }
    this.ws.send(text);
  }

  sendFrame(frame: ServerFrame): void {
    if (!this.closed) this.ws.send(JSON.stringify(frame));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
  }

  /**
   * Counts a received frame: false when it is over this second's allowance (the frame is then
   * dropped unread), and the socket is closed once the rate was exceeded `seconds` seconds in a row.
   */
  admit(limits: FloodLimits, now: number): boolean {
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      if (this.#count > limits.framesPerSecond) {
        this.#strikes = this.#lastStrike === this.#second - 1 ? this.#strikes + 1 : 1;
        this.#lastStrike = this.#second;
      } else {
        this.#strikes = 0;
      }
      this.#second = second;
      this.#count = 0;
      // The second just ended was over the rate, and so were the ones before it: a flood.
      if (this.#strikes >= limits.seconds && this.#lastStrike === second - 1) {
        this.close(CLOSE_FLOOD, 'Too many frames');
        return false;
      }
    }
    this.#count++;
    return this.#count <= limits.framesPerSecond;
  }
}
