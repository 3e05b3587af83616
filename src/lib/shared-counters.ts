/**
 * Fixed-window counters shared by every instance through Redis, or kept in this
 * process without it. The counting itself is @fastify/rate-limit's (its Redis
 * store's Lua script and its in-memory LRU store); this module only adds what the
 * library leaves to us: every count is also kept in memory and the larger of the
 * two is answered, so an instance still refuses what it has counted itself while
 * Redis is away or after Redis restarted empty; Redis trouble never fails a
 * request, and the fall-back is logged once, not per request. The same counters
 * feed the rate-limit plugin (`storeClass`) and the failed-login throttle.
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';

const require = createRequire(import.meta.url);

/** What a store of @fastify/rate-limit offers (its stores are not typed). */
interface RateLimitStore {
  incr(
    key: string,
    cb: (err: Error | null, result?: { current: number; ttl: number }) => void,
    timeWindow: number,
    max: number,
  ): void;
  child(routeOptions: unknown): RateLimitStore;
}
/** toad-cache's LruMap, which holds the local store's counts. */
interface LocalCounts {
  get(key: string): Count | undefined;
  delete(key: string): void;
  items: Map<string, unknown>;
}
type LocalStoreClass = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache?: number,
) => RateLimitStore & { lru: LocalCounts };
type RedisStoreClass = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => RateLimitStore;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreClass;
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as RedisStoreClass;

export interface CounterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

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

/** A Redis SCAN pattern matching exactly the keys that start with `prefix`. */
const startingWith = (prefix: string) => `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;

/**
 * One Redis connection for the process. Commands fail fast instead of queueing
 * while it is down (the counters then fall back to memory), and ioredis keeps
 * reconnecting in the background.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Without a listener ioredis reports every failed reconnection on stderr; the counters log the outage once.
  redis.on('error', () => {});
  return redis;
}

export function createSharedCounters(options: {
  redis: Redis | undefined;
  prefix: string;
  name: string;
  log: CounterLog;
  localEntries: number;
}) {
  const { redis, log } = options;
  const local = new LocalStore(false, false, options.localEntries);
  const shared = redis ? new RedisStore(false, false, redis, options.prefix) : undefined;
  let redisFailedAt = 0;
  let degraded = false;

  const viaStore = (store: RateLimitStore, key: string, windowMs: number, max: number) =>
    new Promise<Count>((resolve, reject) =>
      store.incr(key, (err, result) => (err ? reject(err) : resolve(result!)), windowMs, max),
    );

  function fallBack(err: unknown): void {
    redisFailedAt = Date.now();
    if (degraded) return;
    degraded = true;
    log.warn(
      { counters: options.name, err: { message: (err as Error).message } },
      'Redis unavailable: counting in this instance only until it is back',
    );
  }

  /** The shared count, or undefined while Redis is away (then this instance counts alone). */
  async function sharedIncr(key: string, windowMs: number, max: number): Promise<Count | undefined> {
    if (!shared || Date.now() - redisFailedAt < REDIS_RETRY_AFTER_MS) return undefined;
    if (redis!.status !== 'ready') {
      fallBack(new Error(`Redis connection is ${redis!.status}`));
      return undefined;
    }
    try {
      const count = await viaStore(shared, key, windowMs, max);
      if (degraded) {
        degraded = false;
        log.info({ counters: options.name }, 'Redis is back: counters are shared again');
      }
      return count;
    } catch (err) {
      fallBack(err);
      return undefined;
    }
  }

  /** Counts in memory and in Redis, and answers the larger count: Redis emptied by a restart forgets nothing this instance saw. */
  async function incr(key: string, windowMs: number, max: number): Promise<Count> {
    const mine = await viaStore(local, key, windowMs, max);
    const theirs = await sharedIncr(key, windowMs, max);
    return theirs && theirs.current >= mine.current ? theirs : mine;
  }

  async function reset(key: string): Promise<void> {
    local.lru.delete(key);
    if (shared && redis!.status === 'ready') await redis!.del(`${options.prefix}${key}`).catch(fallBack);
  }

  /** Takes one back from a running count (an attempt that turned out not to count). */
  async function refund(key: string): Promise<void> {
    const mine = local.lru.get(key);
    if (mine && mine.current > 0) mine.current -= 1;
    if (shared && redis!.status === 'ready')
      await redis!.eval(REFUND_SCRIPT, 1, `${options.prefix}${key}`).catch(fallBack);
  }

  /** Forgets this instance's counts of every key that starts with `prefix`. */
  function forgetLocally(prefix: string): void {
    for (const key of [...local.lru.items.keys()]) if (key.startsWith(prefix)) local.lru.delete(key);
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
    incr(key: string, cb: (err: Error | null, result?: Count) => void, timeWindow: number, max: number): void {
      incr(key, timeWindow, max).then(
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
