/**
 * Presence in Redis, shared by every worker. Per database, a sorted set of online users scored by
 * the latest expiry of their sockets (`<prefix>presence:<db>`), and per user a sorted set of
 * their sockets scored by expiry (`<prefix>presence:<db>:<uid>`). Each operation is one Lua
 * script, so a transition (first socket touched, last one gone or lapsed) is seen by exactly one
 * caller; the clock is the Redis server's (`TIME`), so workers' clocks need not agree. Keys expire
 * a while after their last touch, so a Redis left alone empties itself; after a Redis restart
 * the next heartbeats rebuild everything (each user reported online again).
 */
import type { Redis } from 'ioredis';
import type { PresenceEntry, PresenceStore } from './bus.js';

/** Keys outlive their last touch by this much, so nothing stays when every worker is gone. */
const KEEP_MS = 10 * 60_000;

const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS[1] users; ARGV: ttl, user-key prefix, keep, then uid, socket pairs → users that came online. */
const TOUCH = `${NOW}
local exp = now + tonumber(ARGV[1])
local came, seen = {}, {}
for i = 4, #ARGV, 2 do
  local uid, sock = ARGV[i], ARGV[i + 1]
  local prev = redis.call('ZSCORE', KEYS[1], uid)
  if (not prev or tonumber(prev) <= now) and not seen[uid] then came[#came + 1] = uid end
  seen[uid] = true
  local ukey = ARGV[2] .. uid
  redis.call('ZADD', ukey, exp, sock)
  redis.call('PEXPIRE', ukey, ARGV[3])
  redis.call('ZADD', KEYS[1], 'GT', exp, uid)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return came`;

/** KEYS[1] users, KEYS[2] the user's sockets; ARGV: socket, uid → 1 when the user went offline. */
const LEAVE = `${NOW}
redis.call('ZREM', KEYS[2], ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if #top == 0 then
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('DEL', KEYS[2])
  return 1
end
redis.call('ZADD', KEYS[1], top[2], ARGV[2])
return 0`;

/** KEYS[1] users; ARGV: user-key prefix → the users whose sockets all lapsed (removed). */
const LAPSE = `${NOW}
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, uid in ipairs(gone) do
  redis.call('ZREM', KEYS[1], uid)
  redis.call('DEL', ARGV[1] .. uid)
end
return gone`;

/** KEYS[1] users → the online ones. */
const ONLINE = `${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')`;

type Script = (...args: (string | number)[]) => Promise<unknown>;

export class RedisPresence implements PresenceStore {
  readonly #scripts: Record<'ffPresenceTouch' | 'ffPresenceLeave' | 'ffPresenceLapse' | 'ffPresenceOnline', Script>;

  constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand('ffPresenceTouch', { numberOfKeys: 1, lua: TOUCH });
    redis.defineCommand('ffPresenceLeave', { numberOfKeys: 2, lua: LEAVE });
    redis.defineCommand('ffPresenceLapse', { numberOfKeys: 1, lua: LAPSE });
    redis.defineCommand('ffPresenceOnline', { numberOfKeys: 1, lua: ONLINE });
    const commands = redis as unknown as Record<string, Script>;
    const bind = (name: string): Script => (...args) => commands[name]!.apply(redis, args);
    this.#scripts = {
      ffPresenceTouch: bind('ffPresenceTouch'), ffPresenceLeave: bind('ffPresenceLeave'),
      ffPresenceLapse: bind('ffPresenceLapse'), ffPresenceOnline: bind('ffPresenceOnline'),
    };
  }

  #users(db: string): string {
    return `${this.prefix}presence:${db}`;
  }

  async touch(db: string, entries: readonly PresenceEntry[], ttlMs: number): Promise<number[]> {
    if (!entries.length) return [];
    const pairs = entries.flatMap((e) => [e.uid, e.socket]);
    return ids(await this.#scripts.ffPresenceTouch(this.#users(db), Math.round(ttlMs), `${this.#users(db)}:`, KEEP_MS, ...pairs));
  }

  async leave(db: string, entry: PresenceEntry): Promise<boolean> {
    return (await this.#scripts.ffPresenceLeave(this.#users(db), `${this.#users(db)}:${entry.uid}`, entry.socket, entry.uid)) === 1;
  }

  async lapse(db: string): Promise<number[]> {
    return ids(await this.#scripts.ffPresenceLapse(this.#users(db), `${this.#users(db)}:`));
  }

  async online(db: string): Promise<number[]> {
    return ids(await this.#scripts.ffPresenceOnline(this.#users(db))).sort((a, b) => a - b);
  }
}

function ids(reply: unknown): number[] {
  return Array.isArray(reply) ? reply.map(Number) : [];
}
