/**
 * Fixed-window counters shared by every instance through Redis, or kept in this
 * process without it. The counting itself is @fastify/rate-limit's (its Redis
 * store's Lua script and its in-memory LRU store); this module only adds what the
 * library leaves to us: when Redis is away the counters fall back to memory, so
 * Redis trouble never fails a request, and the fall-back is logged once, not per
 * request. The same counters feed the rate-limit plugin (`storeClass`) and the
 * failed-login throttle (`incr`, `reset`).
 */
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';

const require = createRequire(import.meta.url);

/** What a store of @fastify/rate-limit offers (its stores are not typed). */
interface RateLimitStore {
  incr(key: string, cb: (err: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void;
  child(routeOptions: unknown): RateLimitStore;
}
type LocalStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => RateLimitStore & { lru: { delete(key: string): void } };
type RedisStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => RateLimitStore;
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

export function createSharedCounters(options: { redis: Redis | undefined; prefix: string; name: string; log: CounterLog; localEntries: number }) {
  const { redis, log } = options;
  const local = new LocalStore(false, false, options.localEntries);
  const shared = redis ? new RedisStore(false, false, redis, options.prefix) : undefined;
  let redisFailedAt = 0;
  let degraded = false;

  const viaStore = (store: RateLimitStore, key: string, windowMs: number, max: number) =>
    new Promise<Count>((resolve, reject) => store.incr(key, (err, result) => (err ? reject(err) : resolve(result!)), windowMs, max));

  function fallBack(err: unknown): void {
    redisFailedAt = Date.now();
    if (degraded) return;
    degraded = true;
    log.warn({ counters: options.name, err: { message: (err as Error).message } }, 'Redis unavailable: counting in this instance only until it is back');
  }

  async function incr(key: string, windowMs: number, max: number): Promise<Count> {
    if (shared && Date.now() - redisFailedAt >= REDIS_RETRY_AFTER_MS) {
      if (redis!.status === 'ready') {
        try {
          const count = await viaStore(shared, key, windowMs, max);
          if (degraded) {
            degraded = false;
            log.info({ counters: options.name }, 'Redis is back: counters are shared again');
          }
          return count;
        } catch (err) {
          fallBack(err);
        }
      } else {
        fallBack(new Error(`Redis connection is ${redis!.status}`));
      }
    }
    return viaStore(local, key, windowMs, max);
  }

  async function reset(key: string): Promise<void> {
    local.lru.delete(key);
    if (shared && redis!.status === 'ready') await redis!.del(`${options.prefix}${key}`).catch(fallBack);
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

  return { incr, reset, storeClass: Store };
}

export type SharedCounters = ReturnType<typeof createSharedCounters>;
