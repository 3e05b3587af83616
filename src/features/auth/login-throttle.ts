/**
 * Brute-force protection: at most `maxFailures` login attempts for one user name
 * within `windowSeconds` (from the first) are checked; further ones are refused
 * with 429 and Retry-After until the window ends, before any hashing is done.
 * Each attempt is counted before its password is hashed, so parallel guesses
 * never check more than `maxFailures` passwords; a successful login clears the
 * count. Unknown and known user names are treated alike, so nothing leaks. With
 * Redis the count is shared by every instance (shared-counters.ts); otherwise
 * it is kept in memory, capped so that spraying names cannot exhaust it.
 */
import { TooManyAttemptsError } from '../../errors.js';
import type { SharedCounters } from '../../lib/shared-counters.js';

/** How many user names an instance tracks in memory (oldest dropped first). */
export const MAX_TRACKED_NAMES = 100_000;

export function createLoginThrottle(options: { maxFailures: number; windowSeconds: number; counters: SharedCounters }) {
  const windowMs = options.windowSeconds * 1000;
  const keyOf = (name: string) => `login:${name}`;

  return {
    /** Counts an attempt for the user name; throws 429 when it is one too many. */
    async attempt(name: string): Promise<void> {
      if (options.maxFailures === 0) return;
      const { current, ttl } = await options.counters.incr(keyOf(name), windowMs, options.maxFailures);
      if (current > options.maxFailures) throw new TooManyAttemptsError(Math.max(1, Math.ceil(ttl / 1000)));
    },
    /** A successful login forgets the attempts. */
    async succeed(name: string): Promise<void> {
      if (options.maxFailures === 0) return;
      await options.counters.reset(keyOf(name));
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
