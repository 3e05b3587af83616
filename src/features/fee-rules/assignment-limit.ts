/**
 * Assignment requests per customer per minute (ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE):
 * every change of a customer's fee rules may write history for each merchant
 * it touches, and that history is kept, so one customer's requests are capped
 * whoever sends them (any token or key of the customer). Whatever changes fee
 * rules on a customer's behalf (today bulk-assign and /all) takes one before it
 * touches the database. Counted in a fixed window of a minute, shared by every
 * instance through Redis when configured (lib/shared-counters.ts).
 */
import { RateLimitedError } from '../../errors.js';
import type { SharedCounters } from '../../lib/shared-counters.js';

const WINDOW_MS = 60_000;

export function createAssignmentLimit(options: { counters: SharedCounters; perMinute: number }) {
  const { counters, perMinute } = options;
  return {
    /** Counts one assignment request of the customer; 429 rate_limited when the minute's are used up. */
    async take(customerId: string): Promise<void> {
      if (perMinute === 0) return;
      const { current, ttl } = await counters.incr(customerId, WINDOW_MS);
      if (current <= perMinute) return;
      throw new RateLimitedError(Math.max(1, Math.ceil(ttl / 1000)), {
        max: perMinute,
        detail: `This customer has made ${perMinute} assignment requests this minute, the most allowed; retry after the number of seconds in Retry-After.`,
      });
    },
  };
}

export type AssignmentLimit = ReturnType<typeof createAssignmentLimit>;
