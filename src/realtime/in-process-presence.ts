/**
 * Presence kept in this process's memory (one worker, no Redis): per database, per user, the
 * expiry of each of their sockets. A user's entry goes as soon as their last socket leaves or
 * lapses, so the store holds only what is online.
 */
import type { PresenceEntry, PresenceStore } from './bus.js';

export class InProcessPresence implements PresenceStore {
  /** db → user → socket key → expiry (epoch ms). */
  readonly #users = new Map<string, Map<number, Map<string, number>>>();

  async touch(db: string, entries: readonly PresenceEntry[], ttlMs: number): Promise<number[]> {
    const now = Date.now();
    let users = this.#users.get(db);
    if (!users) this.#users.set(db, (users = new Map()));
    const cameOnline = new Set<number>();
    for (const { uid, socket } of entries) {
      let sockets = users.get(uid);
      if (!sockets) users.set(uid, (sockets = new Map()));
      if (!isLive(sockets, now)) cameOnline.add(uid);
      sockets.set(socket, now + ttlMs);
    }
    return [...cameOnline];
  }

  async leave(db: string, { uid, socket }: PresenceEntry): Promise<boolean> {
    const users = this.#users.get(db);
    const sockets = users?.get(uid);
    if (!users || !sockets) return false; // lapsed already (and reported then)
    sockets.delete(socket);
    if (isLive(sockets, Date.now())) return false;
    users.delete(uid);
    if (!users.size) this.#users.delete(db);
    return true;
  }

  async lapse(db: string): Promise<number[]> {
    const users = this.#users.get(db);
    if (!users) return [];
    const now = Date.now();
    const gone: number[] = [];
    for (const [uid, sockets] of users) {
      if (isLive(sockets, now)) continue;
      users.delete(uid);
      gone.push(uid);
    }
    if (!users.size) this.#users.delete(db);
    return gone;
  }

  async online(db: string): Promise<number[]> {
    const users = this.#users.get(db);
    if (!users) return [];
    const now = Date.now();
    return [...users].filter(([, sockets]) => isLive(sockets, now)).map(([uid]) => uid).sort((a, b) => a - b);
  }
}

/** True when some socket is still alive; drops the lapsed ones on the way. */
function isLive(sockets: Map<string, number>, now: number): boolean {
  let live = false;
  for (const [key, expires] of sockets) {
    if (expires > now) live = true;
    else sockets.delete(key);
  }
  return live;
}
