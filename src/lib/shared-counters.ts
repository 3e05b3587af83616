/**
 * Fixed-window counters shared by every instance through Redis, or kept in this
 * process without it. Every count is also kept in memory and the larger of the
 * two is answered, so an instance still refuses what it has counted itself while
 * Redis is away or after Redis restarted empty; Redis trouble never fails a
 * request, and the fall-back is logged once, not per request. The same counters
 * feed the rate-limit plugin (through its public `store` option) and the
 * failed-login throttle. The windows are counted here rather than by
 * @fastify/rate-limit's own stores because those are not part of its public
 * interface; the counting is the same fixed window (INCR, then PEXPIRE on the
 * first hit).
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Log } from './log.js';

export interface Count {
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

/** After a Redis failure, requests count locally this long before Redis is tried again. */
const REDIS_RETRY_AFTER_MS = 5000;
/** How long a command-line process waits for its Redis connection before saying it cannot reach Redis. */
const REDIS_CONNECT_WAIT_MS = 3000;

/** Takes one back from a count that is still running; never below zero, never creates a key. */
const REFUND_SCRIPT = `local n = tonumber(redis.call('GET', KEYS[1]))
if n and n > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

/** One fixed window: INCR, and the window's expiry set by the first hit; answers the count and the time left. */
const INCR_SCRIPT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

/** A Redis SCAN pattern matching exactly the keys that start with `prefix`. */
const startingWith = (prefix: string) => `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;

/**
 * The connection with the counters' two scripts defined as commands: ioredis then
 * sends EVALSHA (the script's hash) instead of the script's text with every
 * request, so Redis neither receives nor hashes the text each time.
 */
export type CounterRedis = Redis & {
  countWindow(key: string, windowMs: number): Promise<[number, number]>;
  refundCount(key: string): Promise<number>;
};

/**
 * One Redis connection for the process. Commands fail fast instead of queueing
 * while it is down (the counters then fall back to memory), and ioredis keeps
 * reconnecting in the background.
 */
export function connectRedis(url: string): CounterRedis {
  // Required when asked for: a process without REDIS_URL never holds ioredis (V8 keeps every loaded module's source).
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Without a listener ioredis reports every failed reconnection on stderr; the counters log the outage once.
  redis.on('error', () => {});
  redis.defineCommand('countWindow', { numberOfKeys: 1, lua: INCR_SCRIPT });
  redis.defineCommand('refundCount', { numberOfKeys: 1, lua: REFUND_SCRIPT });
  return redis as CounterRedis;
}

interface Window {
  current: number;
  startedAt: number;
}

export function createSharedCounters(options: {
  redis: CounterRedis | undefined;
  prefix: string;
  name: string;
  log: Log;
  localEntries: number;
}) {
  const { redis, log } = options;
  // Bounded by maxSize rather than max: lru-cache preallocates `max` slots up front (two arrays and three
  // typed arrays of `max` each), where maxSize grows its storage with the counts it holds.
  const local = new LRUCache<string, Window>({ maxSize: options.localEntries, sizeCalculation: () => 1 });
  let redisFailedAt = 0;
  let degraded = false;

  function localIncr(key: string, windowMs: number): Count {
    const now = Date.now();
    const window = local.get(key);
    if (!window || window.startedAt + windowMs <= now) {
      local.set(key, { current: 1, startedAt: now });
      return { current: 1, ttl: windowMs };
    }
    window.current += 1;
    return { current: window.current, ttl: window.startedAt + windowMs - now };
  }

  function fallBack(err: unknown): void {
    redisFailedAt = Date.now();
    if (degraded) return;
    degraded = true;
    log.warn(
      { counters: options.name, err: { message: (err as Error).message } },
      'Redis unavailable: counting in this instance only until it is back',
    );
  }

  /** Redis, when it is configured, answering, and not in its back-off after a failure. */
  function readyRedis(): CounterRedis | undefined {
    return redis?.status === 'ready' ? redis : undefined;
  }

  /** The shared count, or undefined while Redis is away (then this instance counts alone). */
  async function sharedIncr(key: string, windowMs: number): Promise<Count | undefined> {
    if (!redis || Date.now() - redisFailedAt < REDIS_RETRY_AFTER_MS) return undefined;
    const ready = readyRedis();
    if (!ready) {
      fallBack(new Error(`Redis connection is ${redis.status}`));
      return undefined;
    }
    try {
      const [current, ttl] = await ready.countWindow(`${options.prefix}${key}`, windowMs);
      if (degraded) {
        degraded = false;
        log.info({ counters: options.name }, 'Redis is back: counters are shared again');
      }
      return { current, ttl };
    } catch (err) {
      fallBack(err);
      return undefined;
    }
  }

  /** Counts in memory and in Redis, and answers the larger count: Redis emptied by a restart forgets nothing this instance saw. */
  async function incr(key: string, windowMs: number): Promise<Count> {
    const mine = localIncr(key, windowMs);
    const theirs = await sharedIncr(key, windowMs);
    return theirs && theirs.current >= mine.current ? theirs : mine;
  }

  async function reset(key: string): Promise<void> {
    local.delete(key);
    await readyRedis()?.del(`${options.prefix}${key}`).catch(fallBack);
  }

  /** Takes one back from a running count (an attempt that turned out not to count). */
  async function refund(key: string): Promise<void> {
    const mine = local.get(key);
    if (mine && mine.current > 0) mine.current -= 1;
    await readyRedis()?.refundCount(`${options.prefix}${key}`).catch(fallBack);
  }

  /** Forgets this instance's counts of every key that starts with `prefix`. */
  function forgetLocally(prefix: string): void {
    for (const key of [...local.keys()]) if (key.startsWith(prefix)) local.delete(key);
  }

  /**
   * Forgets the counts of every key that starts with `prefix`, here and in Redis
   * (other instances forget theirs when told). Throws when Redis is configured
   * but cannot be reached, since its counts would then still refuse.
   */
  async function forgetEverywhere(prefix: string): Promise<void> {
    forgetLocally(prefix);
    if (!redis) return;
    try {
      if (redis.status !== 'ready') await once(redis, 'ready', { signal: AbortSignal.timeout(REDIS_CONNECT_WAIT_MS) });
      for await (const keys of redis.scanStream({ match: startingWith(`${options.prefix}${prefix}`), count: 1000 })) {
        if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]));
      }
    } catch (err) {
      throw new Error(`cannot reach Redis (REDIS_URL) to clear the counts it shares: ${(err as Error).message}`);
    }
  }

  /** A store class for @fastify/rate-limit's `store` option, counting through `incr`. */
  class Store {
    incr(key: string, cb: (err: Error | null, result?: Count) => void, timeWindow: number): void {
      incr(key, timeWindow).then(
        (count) => cb(null, count),
        (err: Error) => cb(err),
      );
    }
    child(): Store {
      return this;
    }
  }

  return { incr, reset, refund, forgetLocally, forgetEverywhere, storeClass: Store };
}

export type SharedCounters = ReturnType<typeof createSharedCounters>;
