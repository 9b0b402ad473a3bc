/**
 * Which sockets of this worker watch which records of one database (spec §6.3): `watch` adds,
 * `unwatch` removes, a closing socket forgets all of its own. A record's entry goes with its last
 * watcher, so the registry holds only what is watched now.
 */
import type { SocketClient } from './socket-client.js';

export class WatchRegistry {
  /** `model:id` → its watchers. */
  readonly #records = new Map<string, Set<SocketClient>>();

  add(client: SocketClient, model: string, id: number): void {
    const key = `${model}:${id}`;
    let watchers = this.#records.get(key);
    if (!watchers) this.#records.set(key, (watchers = new Set()));
    watchers.add(client);
    client.watches.add(key);
  }

  remove(client: SocketClient, model: string, id: number): void {
    this.#drop(client, `${model}:${id}`);
  }

  /** Forgets every watch of a socket (it closed). */
  forget(client: SocketClient): void {
    for (const key of client.watches) this.#drop(client, key);
  }

  of(model: string, id: number): ReadonlySet<SocketClient> | undefined {
    return this.#records.get(`${model}:${id}`);
  }

  /** Records watched. */
  get size(): number {
    return this.#records.size;
  }

  #drop(client: SocketClient, key: string): void {
    client.watches.delete(key);
    const watchers = this.#records.get(key);
    if (!watchers) return;
    watchers.delete(client);
    if (!watchers.size) this.#records.delete(key);
  }
}
