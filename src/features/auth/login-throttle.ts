/**
 * Brute-force protection that cannot be turned against the owner. Failed logins
 * are counted per user name and client address: after `perAddress` within
 * `windowSeconds` (from the first) that pair is refused with 429 and Retry-After
 * until the window ends, before any hashing is done. Per user name from all
 * addresses the limit is `perUser`, against guesses spread over many addresses.
 * So ten guesses from one address never lock the owner out elsewhere. A
 * refused pair is not counted against the user name, or one address could
 * still use up the user name's allowance.
 *
 * Each attempt is counted before its password is hashed, so parallel guesses
 * never check more than the limit; a successful login clears its pair's count
 * and takes its own attempt back from the user name's. Unknown and known user
 * names are treated alike, so nothing leaks. With Redis the counts are shared
 * by every instance, and each instance keeps its own as well
 * (shared-counters.ts); in memory they are capped, so spraying names cannot
 * exhaust it.
 */
import { TooManyAttemptsError } from '../../errors.js';
import type { Count, SharedCounters } from '../../lib/shared-counters.js';

/** How many counts (user names, and user name and address pairs) an instance keeps in memory (oldest dropped first), so a flood of names cannot grow it without bound (its size full: docs/performance.md). */
export const MAX_TRACKED_COUNTS = 100_000;

export interface LoginThrottleOptions {
  /** Failed logins per user name and client address (0: not limited). */
  perAddress: number;
  /** Failed logins per user name from all addresses (0: not limited). */
  perUser: number;
  windowSeconds: number;
  counters: SharedCounters;
}

export function createLoginThrottle(options: LoginThrottleOptions) {
  const { counters, perAddress, perUser } = options;
  const windowMs = options.windowSeconds * 1000;
  // Every key of a user name starts with its encoded form and a '|' that the
  // encoding never yields, so one prefix finds them all and no name's keys can
  // pose as another's (a name may contain any character).
  const keysOf = (name: string) => `${encodeURIComponent(name)}|`;
  const userKey = (name: string) => `${keysOf(name)}user`;
  const pairKey = (name: string, address: string) => `${keysOf(name)}ip:${address}`;
  const refused = (count: Count) => new TooManyAttemptsError(Math.max(1, Math.ceil(count.ttl / 1000)));

  return {
    /** Counts an attempt for the user name from the address; throws 429 when it is one too many. */
    async attempt(name: string, address: string): Promise<void> {
      if (perAddress > 0) {
        const pair = await counters.incr(pairKey(name, address), windowMs);
        if (pair.current > perAddress) throw refused(pair);
      }
      if (perUser > 0) {
        const user = await counters.incr(userKey(name), windowMs);
        if (user.current > perUser) throw refused(user);
      }
    },

    /** A successful login was no failure: its address starts afresh, and the user name's count loses this attempt. */
    async succeed(name: string, address: string): Promise<void> {
      await Promise.all([
        perAddress > 0 && counters.reset(pairKey(name, address)),
        perUser > 0 && counters.refund(userKey(name)),
      ]);
    },

    /**
     * An attempt whose password was never checked (the hashing queue was full, the
     * client hung up before its turn) was no guess: both counts take it back, or
     * refused and abandoned logins would lock out the owner.
     */
    async release(name: string, address: string): Promise<void> {
      await Promise.all([
        perAddress > 0 && counters.refund(pairKey(name, address)),
        perUser > 0 && counters.refund(userKey(name)),
      ]);
    },

    /** Clears every count of the user name, here and in Redis (`feegate users unlock`). */
    unlock(name: string): Promise<void> {
      return counters.forgetEverywhere(keysOf(name));
    },

    /** Clears this instance's counts of the user name (told that another process unlocked it). */
    forgetLocally(name: string): void {
      counters.forgetLocally(keysOf(name));
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
