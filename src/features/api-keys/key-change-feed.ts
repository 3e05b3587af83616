/**
 * Every instance learns of API key changes made by any other: the changing
 * transaction sends NOTIFY (delivered on commit), and each instance invalidates
 * its caches of verified keys and of listings. One LISTEN connection feeds both.
 */
import type { Database } from '../../db/database.js';
import type { Notice } from '../../db/unit-of-work.js';
import { createPushedCache } from '../../lib/pushed-cache.js';
import type { Principal } from '../../lib/principal.js';

/** A verified key as remembered: its caller, and when it stops working (epoch ms; null: never). */
export interface VerifiedKey {
  principal: Principal;
  expiresAt: number | null;
  /** A MERCHANT key whose merchant is INACTIVE: refused (403) until the merchant is ACTIVE again. */
  merchantInactive: boolean;
}

const CHANNEL = 'feegate_api_keys_changed';

/** The notice of the changing unit of work. `keyHash` when a key was revoked or its expiry changed. */
export function keyChangeNotice(customerId: string, keyHash?: string): Notice {
  return { channel: CHANNEL, payload: keyHash ? `${customerId} ${keyHash}` : customerId };
}

/** The notice for many keys of one customer at once (a merchant deactivated or reactivated): one statement. */
export function keysChangeNotice(customerId: string, keyHashes: readonly string[]): Notice {
  return { channel: CHANNEL, payload: keyHashes.map((keyHash) => `${customerId} ${keyHash}`) };
}

export function createKeyCaches(options: { database: Database; keyTtlMs: number; listingTtlMs: number }) {
  /** Verified keys by hash; each key is its own scope. */
  const verifiedKeys = createPushedCache<VerifiedKey>({
    ttlMs: options.keyTtlMs,
    maxEntries: 50_000,
    name: 'api_keys',
  });
  /** Listing pages by request; scoped by customer. */
  const listings = createPushedCache<unknown>({
    ttlMs: options.listingTtlMs,
    maxEntries: 10_000,
    name: 'api_key_listings',
  });
  let unlisten: (() => Promise<void>) | undefined;

  const changed = (customerId: string, keyHash?: string) => {
    listings.invalidate(customerId);
    if (keyHash) verifiedKeys.invalidate(keyHash);
  };

  return {
    verifiedKeys,
    listings,
    /** What this instance changed itself: invalidated at once, before the answer. */
    changed,
    async start(): Promise<void> {
      unlisten = await options.database.listen(CHANNEL, {
        onMessage: (payload) => {
          const [customerId, keyHash] = payload.split(' ');
          if (customerId) changed(customerId, keyHash);
        },
        onConnectedChange: (connected) => {
          verifiedKeys.setConnected(connected);
          listings.setConnected(connected);
        },
      });
    },
    async stop(): Promise<void> {
      verifiedKeys.setConnected(false);
      listings.setConnected(false);
      // The database may already be gone; there is nothing left to unsubscribe from then.
      await unlisten?.().catch(() => {});
    },
  };
}

export type KeyCaches = ReturnType<typeof createKeyCaches>;
