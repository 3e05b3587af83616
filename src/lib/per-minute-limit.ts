/**
 * A count of requests per key per minute, such as a customer's: a fixed window
 * of a minute, shared by every instance through Redis when configured
 * (shared-counters.ts). Past `perMinute` it refuses with 429 rate_limited and
 * Retry-After, before the request touches the database; 0 disables it.
 */
import { RateLimitedError } from '../errors.js';
import type { SharedCounters } from './shared-counters.js';

const WINDOW_MS = 60_000;

export function createPerMinuteLimit(options: {
  counters: SharedCounters;
  perMinute: number;
  /** What is counted, as the refusal names it: "assignment requests". */
  what: string;
}) {
  const { counters, perMinute } = options;
  return {
    /** Counts one request of `key`; 429 rate_limited when the minute's are used up. */
    async take(key: string): Promise<void> {
      if (perMinute === 0) return;
      const { current, ttl } = await counters.incr(key, WINDOW_MS);
      if (current <= perMinute) return;
      throw new RateLimitedError(Math.max(1, Math.ceil(ttl / 1000)), {
        max: perMinute,
        detail: `This customer has made ${perMinute} ${options.what} this minute, the most allowed; retry after the number of seconds in Retry-After.`,
      });
    },
  };
}

export type PerMinuteLimit = ReturnType<typeof createPerMinuteLimit>;
