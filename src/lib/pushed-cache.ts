/**
 * A bounded, short-lived cache whose invalidations are pushed (PostgreSQL
 * NOTIFY) rather than waited out. Entries belong to a scope; invalidating a scope
 * drops its entries, and a read that raced the invalidation is not stored (the
 * caller takes a token before reading the database and hands it back to set()).
 * While the push channel is down nothing is served or stored: a missed
 * invalidation must never keep stale data alive.
 */
import type { ListenHandlers } from '../db/database-core.js';
import { cacheLookups } from './metrics.js';

interface Entry<V> {
  value: V;
  scope: string;
  token: string;
  expiresAt: number;
}

export function createPushedCache<V>(options: { ttlMs: number; maxEntries: number; name: string }) {
  const hit = cacheLookups.labels({ cache: options.name, result: 'hit' });
  const miss = cacheLookups.labels({ cache: options.name, result: 'miss' });
  const entries = new Map<string, Entry<V>>();
  const generations = new Map<string, number>();
  let connected = false;
  let epoch = 0;

  const tokenOf = (scope: string) => `${epoch}:${generations.get(scope) ?? 0}`;
  const accepts = (scope: string, token: string): boolean =>
    connected && options.ttlMs !== 0 && token === tokenOf(scope);

  /** Reads under way, by key: misses of a key under the same token wait for the same one. */
  const loading = new Map<string, { token: string; value: Promise<V> }>();

  function get(key: string): V | undefined {
    const entry = entries.get(key);
    if (!entry) {
      miss.inc();
      return undefined;
    }
    if (!connected || entry.expiresAt <= Date.now() || entry.token !== tokenOf(entry.scope)) {
      entries.delete(key);
      miss.inc();
      return undefined;
    }
    hit.inc();
    return entry.value;
  }

  function set(key: string, scope: string, value: V, token: string): void {
    if (!accepts(scope, token)) return;
    // Oldest first out: a Map iterates in insertion order.
    if (entries.size >= options.maxEntries && !entries.has(key)) entries.delete(entries.keys().next().value!);
    entries.set(key, { value, scope, token, expiresAt: Date.now() + options.ttlMs });
  }

  return {
    /** Take before reading what will be stored. */
    token(scope: string): string {
      return tokenOf(scope);
    },

    get,

    /** Whether set() would store a value read under `token` now: a caller may skip preparing one it would drop. */
    accepts,

    set,

    /**
     * The value of `key`, from memory or read by `load` and kept, misses of one key under one
     * token sharing one read, so that an entry expiring under load is read once, not once a request.
     */
    getOrLoad(key: string, scope: string, load: () => Promise<V>): Promise<V> {
      const token = tokenOf(scope);
      const cached = get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      // Nothing would be kept (the channel is down, or no TTL): each request reads for itself, as without a cache.
      if (!accepts(scope, token)) return load();
      const flying = loading.get(key);
      if (flying?.token === token) return flying.value;
      const value = load().then((loaded) => {
        set(key, scope, loaded, token);
        return loaded;
      });
      const flight = { token, value };
      loading.set(key, flight);
      const landed = () => void (loading.get(key) === flight && loading.delete(key));
      value.then(landed, landed);
      return value;
    },

    invalidate(scope: string): void {
      generations.set(scope, (generations.get(scope) ?? 0) + 1);
    },

    setConnected(value: boolean): void {
      epoch++;
      connected = value;
      entries.clear();
      generations.clear();
    },

    /**
     * Follows a channel of pushed changes (through `listen`, the database's LISTEN):
     * each notice invalidates `scope`, and nothing is served while the channel is
     * down. Answers how to stop following.
     */
    async follow(scope: string, listen: (handlers: ListenHandlers) => Promise<() => Promise<void>>) {
      const unlisten = await listen({
        onMessage: () => this.invalidate(scope),
        onConnectedChange: (value) => this.setConnected(value),
      });
      return async (): Promise<void> => {
        this.setConnected(false);
        await unlisten();
      };
    },
  };
}
