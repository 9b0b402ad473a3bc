/**
 * Socket counts shared by the workers (`REDIS_URL`, `socket-counts.ts`). Per database, a sorted
 * set of workers scored by the end of their lease (`<prefix>sockets:<db>`), and per worker a hash
 * of its counts (`<prefix>sockets:<db>:<worker>`, counter → sockets). Each call is one Lua script
 * on the Redis server's clock: it renews the caller's lease, drops the workers whose lease ran out
 * (with their counts), and — to admit — sums the live workers' counts and writes the caller's in
 * the same atomic step. Keys expire a while after their last touch, so a Redis every worker left
 * empties itself.
 */
import type { Redis } from 'ioredis';
import type { Admission, SocketClaim, SocketCounts } from './socket-counts.js';

/** Keys outlive their last touch by this much (a lease is far shorter; this only cleans up). */
const KEEP_MS = 10 * 60_000;

/**
 * Prelude of every script: `now`, and `lease(workers, me, ttl, prefix)` → 1 when the caller's
 * lease had lapsed (its counts are gone), after dropping every lapsed worker and renewing its own.
 */
const LEASE = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function lease(workers, me, ttl, prefix, keep)
  local prev = redis.call('ZSCORE', workers, me)
  local lapsed = (not prev or tonumber(prev) <= now) and 1 or 0
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', workers, '-inf', now)) do redis.call('DEL', prefix .. w) end
  redis.call('ZREMRANGEBYSCORE', workers, '-inf', now)
  redis.call('ZADD', workers, now + tonumber(ttl), me)
  redis.call('PEXPIRE', workers, keep)
  return lapsed
end`;

/** KEYS[1] workers; ARGV: worker, lease, keep, hash prefix, then counter, max, mine triples → {refused index or -1, lapsed}. */
const ADMIT = `${LEASE}
local me, prefix = ARGV[1], ARGV[4]
local lapsed = lease(KEYS[1], me, ARGV[2], prefix, ARGV[3])
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
for i = 5, #ARGV, 3 do
  local total = tonumber(ARGV[i + 2])
  for _, w in ipairs(live) do
    if w ~= me then total = total + tonumber(redis.call('HGET', prefix .. w, ARGV[i]) or '0') end
  end
  if total > tonumber(ARGV[i + 1]) then return {(i - 5) / 3, lapsed} end
end
local own = prefix .. me
for i = 5, #ARGV, 3 do redis.call('HSET', own, ARGV[i], ARGV[i + 2]) end
redis.call('PEXPIRE', own, ARGV[3])
return {-1, lapsed}`;

/** KEYS[1] the worker's counts; ARGV: keep, then counter, sockets pairs (0 drops the counter). */
const RELEASE = `for i = 2, #ARGV, 2 do
  if tonumber(ARGV[i + 1]) > 0 then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) else redis.call('HDEL', KEYS[1], ARGV[i]) end
end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 0`;

/** KEYS[1] workers; ARGV: worker, lease, keep, hash prefix, replace (1/0), then counter, sockets pairs → lapsed. */
const RENEW = `${LEASE}
local me, prefix = ARGV[1], ARGV[4]
local lapsed = lease(KEYS[1], me, ARGV[2], prefix, ARGV[3])
local own = prefix .. me
if ARGV[5] == '1' then
  redis.call('DEL', own)
  for i = 6, #ARGV, 2 do redis.call('HSET', own, ARGV[i], ARGV[i + 1]) end
  lapsed = 0
end
if redis.call('EXISTS', own) == 1 then redis.call('PEXPIRE', own, ARGV[3]) end
return lapsed`;

type Script = (...args: (string | number)[]) => Promise<unknown>;

export class RedisSocketCounts implements SocketCounts {
  readonly #admit: Script;
  readonly #release: Script;
  readonly #renew: Script;

  constructor(private readonly redis: Redis, private readonly prefix: string) {
    redis.defineCommand('ffSocketsAdmit', { numberOfKeys: 1, lua: ADMIT });
    redis.defineCommand('ffSocketsRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('ffSocketsRenew', { numberOfKeys: 1, lua: RENEW });
    const commands = redis as unknown as Record<string, Script>;
    const bind = (name: string): Script => (...args) => commands[name]!.apply(redis, args);
    this.#admit = bind('ffSocketsAdmit');
    this.#release = bind('ffSocketsRelease');
    this.#renew = bind('ffSocketsRenew');
  }

  /**
   * Fails at once while the connection is down (reconnecting): an upgrade must not wait for Redis
   * (the quota then counts on this worker's own sockets) — a command would wait for a reconnection.
   */
  #assertReachable(): void {
    const status = this.redis.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') throw new Error(`Redis is ${status}`);
  }

  #workers(db: string): string {
    return `${this.prefix}sockets:${db}`;
  }

  async admit(db: string, worker: string, claims: readonly SocketClaim[], leaseMs: number): Promise<Admission> {
    this.#assertReachable();
    const triples = claims.flatMap((c) => [c.counter, c.max, c.mine]);
    const reply = await this.#admit(this.#workers(db), worker, Math.round(leaseMs), KEEP_MS, `${this.#workers(db)}:`, ...triples);
    const [refused, lapsed] = reply as [number, number];
    return { refused: Number(refused), lapsed: Number(lapsed) === 1 };
  }

  async release(db: string, worker: string, counts: ReadonlyMap<string, number>): Promise<void> {
    this.#assertReachable();
    await this.#release(`${this.#workers(db)}:${worker}`, KEEP_MS, ...[...counts].flat());
  }

  async renew(db: string, worker: string, leaseMs: number, all: ReadonlyMap<string, number> | null): Promise<boolean> {
    this.#assertReachable();
    const pairs = all ? [...all].flat() : [];
    const lapsed = await this.#renew(this.#workers(db), worker, Math.round(leaseMs), KEEP_MS, `${this.#workers(db)}:`, all ? 1 : 0, ...pairs);
    return Number(lapsed) !== 1;
  }
}
