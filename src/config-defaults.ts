/**
 * The defaults of config.ts that are derived (from the machine's cores, the pool)
 * or tuned by measurement, with the reason for each; SETTINGS states them as its
 * rows' defaults, and the rest of the service reads the fixed ones from here.
 */
import os from 'node:os';

/**
 * Hashes at once by default: one core fewer than the machine has, so argon2 never
 * takes every core from the event loop and the database (more hashes than that buy
 * no more logins a second, only slower answers for everything else;
 * docs/performance.md), and at most 4, since each hash holds 19 MiB.
 */
export function defaultLoginConcurrency(cores = os.availableParallelism()): number {
  return Math.min(4, Math.max(1, cores - 1));
}

/**
 * Merchant listing pages read at once by default: a page of 10,000 is mostly
 * serialising, so more pages than twice the cores finish none sooner, and each
 * page read holds a batch of rows and its text (docs/performance.md, line 3c);
 * at most half the pool, so pages never take every connection from the rest.
 */
export function defaultListingConcurrentPages(poolSize: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(cores * 2, Math.floor(poolSize / 2)));
}

/**
 * Logins that may wait per hashing thread: about half a second of argon2 each.
 * A refused login costs CPU too, since clients that ignore Retry-After send it
 * again at once: a shorter queue spends a storm on refusals and gets fewer logins
 * through (docs/performance.md).
 */
export const LOGIN_QUEUE_PER_HASHER = 64;

/**
 * A hashing thread rests after each hash for a third of the time it took, so in a
 * login storm it uses three quarters of a core. Even at SCHED_IDLE a core busy
 * with hashing slows the other requests (a busy loop in argon2's place did the
 * same, so it is the busy core, not argon2's memory traffic); resting leaves them
 * their latency for somewhat fewer logins a second (docs/performance.md). A
 * single login never waits for it: the rest follows the answer.
 */
export const LOGIN_HASH_CPU_PERCENT = 75;

/**
 * Bounds of every PostgreSQL statement and lock wait, so that no connection is
 * held for ever by a hang. A minute leaves the longest statement, /all for
 * 100,000 merchants × 12 plans, several times its time even on a loaded
 * machine (docs/performance.md); five seconds of waiting for a lock is longer
 * than any lock feegate holds is meant to be waited for (a customer's assignments wait in memory,
 * docs/design.md).
 */
export const DATABASE_STATEMENT_TIMEOUT_MS = 60_000;
export const DATABASE_LOCK_TIMEOUT_MS = 5000;
