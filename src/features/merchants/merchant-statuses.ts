/**
 * Merchants' statuses in memory, for fee quotes (contract section 24): reading
 * one merchant's status was half the time of a one-transaction quote, and a
 * status changes rarely beside the quotes that read it. Every change is pushed:
 * the trigger of migration 0026 NOTIFYs on commit whenever merchants are updated
 * or removed, whoever writes, and every instance drops all it holds (one scope).
 * Only merchants found are held, so one created later is read when first asked.
 * While the LISTEN connection is down nothing is served from memory
 * (lib/pushed-cache.ts).
 */
import type { Database } from '../../db/database.js';
import { createPushedCache } from '../../lib/pushed-cache.js';
import type { MerchantRow, MerchantsDal } from './merchants-dal.js';

const CHANNEL = 'feegate_merchants_changed';
const SCOPE = 'all';

type MerchantStatus = Pick<MerchantRow, 'id' | 'status'>;

export function createMerchantStatuses(options: {
  database: Database;
  merchantsDal: Pick<MerchantsDal, 'statusesOf'>;
  ttlMs: number;
  maxEntries: number;
}) {
  const { merchantsDal } = options;
  const cache = createPushedCache<MerchantRow['status']>({
    ttlMs: options.ttlMs,
    maxEntries: options.maxEntries,
    name: 'merchant_statuses',
  });
  let unfollow: (() => Promise<void>) | undefined;
  const keyOf = (customerId: string, merchantId: string) => `${customerId} ${merchantId}`;

  return {
    /** The status of each of the customer's merchants among `merchantIds` (ids as PostgreSQL prints them); others are absent. */
    async statusesOf(customerId: string, merchantIds: string[]): Promise<MerchantStatus[]> {
      const found: MerchantStatus[] = [];
      const missing: string[] = [];
      for (const id of merchantIds) {
        const status = cache.get(keyOf(customerId, id));
        if (status === undefined) missing.push(id);
        else found.push({ id, status });
      }
      if (missing.length === 0) return found;
      const token = cache.token(SCOPE);
      const read = await merchantsDal.statusesOf(customerId, missing);
      for (const { id, status } of read) cache.set(keyOf(customerId, id), SCOPE, status, token);
      return found.concat(read);
    },
    /** What this instance changed itself: dropped before it answers. */
    changed: () => cache.invalidate(SCOPE),
    async start(): Promise<void> {
      unfollow = await cache.follow(SCOPE, (handlers) => options.database.listen(CHANNEL, handlers));
    },
    async stop(): Promise<void> {
      await unfollow?.();
    },
  };
}

export type MerchantStatuses = ReturnType<typeof createMerchantStatuses>;
