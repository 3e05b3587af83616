/**
 * A short-lived memory of verified keys, so key authentication is a hash and a
 * map lookup. Revocation is pushed: the deleting instance sends NOTIFY in the
 * same transaction, and every instance drops the key when it arrives. While the
 * LISTEN connection is down a notification could be missed, so the cache is
 * emptied and bypassed until it is back: safety over speed.
 */
import type { Database } from '../../db/database.js';
import type { Principal } from '../auth/principal.js';

export const REVOCATION_CHANNEL = 'feegate_api_key_revoked';
const MAX_ENTRIES = 50_000;

interface Entry {
  principal: Principal;
  expiresAt: number;
}

export function createVerifiedKeyCache(options: { database: Database; ttlMs: number; onListenError?(err: Error): void }) {
  const entries = new Map<string, Entry>();
  let listening = false;
  // Bumped by every revocation: a lookup that raced one must not be cached.
  let epoch = 0;
  let unlisten: (() => Promise<void>) | undefined;

  return {
    get(keyHash: string): Principal | undefined {
      const entry = entries.get(keyHash);
      if (!entry) return undefined;
      if (!listening || entry.expiresAt <= Date.now()) {
        entries.delete(keyHash);
        return undefined;
      }
      return entry.principal;
    },

    /** Take before reading the database; pass to set(). */
    epoch(): number {
      return epoch;
    },

    set(keyHash: string, principal: Principal, readAtEpoch: number): void {
      if (!listening || options.ttlMs === 0 || readAtEpoch !== epoch) return;
      // Oldest first out: Map keeps insertion order.
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(keyHash, { principal, expiresAt: Date.now() + options.ttlMs });
    },

    evict(keyHash: string): void {
      epoch++;
      entries.delete(keyHash);
    },

    async start(): Promise<void> {
      unlisten = await options.database.listen(REVOCATION_CHANNEL, {
        onMessage: (keyHash) => {
          epoch++;
          entries.delete(keyHash);
        },
        onConnectedChange: (connected) => {
          epoch++;
          listening = connected;
          if (!connected) entries.clear();
        },
      });
    },

    async stop(): Promise<void> {
      listening = false;
      entries.clear();
      // The database may already be gone; there is nothing left to unsubscribe from then.
      await unlisten?.().catch(() => {});
    },
  };
}

export type VerifiedKeyCache = ReturnType<typeof createVerifiedKeyCache>;
