/**
 * Merchants' fee-rule timelines in memory, for GET /v1/merchants/{id}/fee-rules?at=:
 * every plan a merchant holds or held, with when it was assigned and removed, so
 * that any instant up to now is answered without the database. Reconciliation asks
 * many instants of one merchant, and the timeline changes only when assignments
 * or plans do. Those changes are pushed: triggers of migration 0012 NOTIFY on
 * commit, whoever writes, and every instance drops all timelines (one scope: the
 * notice names no customer, and assignments are rare beside reads). While the
 * LISTEN connection is down nothing is served from memory (lib/pushed-cache.ts).
 */
import type { Database } from '../../db/database.js';
import { createStringInterner } from '../../lib/interned-strings.js';
import { createPushedCache } from '../../lib/pushed-cache.js';
import type { TimelineRow } from './fee-rule-history-dal.js';

const CHANNEL = 'feegate_fee_rules_changed';
const SCOPE = 'all';
/** Longer timelines are read from the database each time rather than held. */
export const MAX_CACHED_TIMELINE_ROWS = 1000;
/** Distinct plan fields and instants shared by the held timelines: a customer's plans and its bulk changes' instants. */
const MAX_INTERNED_VALUES = 10_000;

/**
 * The row with one copy of each value the held timelines repeat: every merchant
 * of a bulk assignment holds the same plans since the same instant, and a
 * timeline held for a minute should cost its objects, not its text again.
 */
function sharedValues(row: TimelineRow, intern: (value: string) => string): TimelineRow {
  return {
    ...row,
    id: intern(row.id),
    paymentMethod: intern(row.paymentMethod),
    cardBrand: intern(row.cardBrand),
    commission: intern(row.commission),
    assignedAt: intern(row.assignedAt),
    removedAt: row.removedAt === null ? null : intern(row.removedAt),
  };
}

export function createFeeRuleTimelines(options: { database: Database; ttlMs: number; maxEntries: number }) {
  const cache = createPushedCache<TimelineRow[]>({
    ttlMs: options.ttlMs,
    maxEntries: options.maxEntries,
    name: 'fee_rule_timelines',
  });
  const intern = createStringInterner(MAX_INTERNED_VALUES);
  let unfollow: (() => Promise<void>) | undefined;
  const keyOf = (customerId: string, merchantId: string) => `${customerId} ${merchantId}`;

  return {
    /** A customer's merchant's timeline, if held; only ever stored after the merchant was found to be the customer's. */
    get: (customerId: string, merchantId: string) => cache.get(keyOf(customerId, merchantId)),
    /** Take before reading the timeline that will be stored. */
    token: () => cache.token(SCOPE),
    /** Stores the timeline when the cache takes it, and answers the rows as held (their values shared with the other timelines). */
    set(customerId: string, merchantId: string, rows: TimelineRow[], token: string): TimelineRow[] {
      if (rows.length > MAX_CACHED_TIMELINE_ROWS || !cache.accepts(SCOPE, token)) return rows;
      const held = rows.map((row) => sharedValues(row, intern));
      cache.set(keyOf(customerId, merchantId), SCOPE, held, token);
      return held;
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

export type FeeRuleTimelines = ReturnType<typeof createFeeRuleTimelines>;
