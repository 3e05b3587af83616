/**
 * Brute-force protection: after `maxFailures` failed logins for one user name
 * within `windowSeconds`, further attempts are refused with 429 and Retry-After
 * until the oldest failure leaves the window, before any hashing is done.
 * Unknown and known user names are treated alike, so nothing leaks. The count is
 * per instance (memory); entries are capped so spraying names cannot exhaust it.
 */
import { AppError } from '../../errors.js';

const MAX_TRACKED_NAMES = 100_000;

export class TooManyAttemptsError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'too_many_login_attempts', 'Too Many Requests', {
      detail: 'Too many failed logins for this user; retry later.',
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

export function createLoginThrottle(options: { maxFailures: number; windowSeconds: number; now?: () => number }) {
  const failures = new Map<string, number[]>();
  const now = options.now ?? Date.now;
  const windowMs = options.windowSeconds * 1000;

  const recent = (name: string): number[] => {
    const since = now() - windowMs;
    const list = (failures.get(name) ?? []).filter((t) => t > since);
    if (list.length) failures.set(name, list);
    else failures.delete(name);
    return list;
  };

  return {
    /** Throws 429 when the user name is locked out. */
    check(name: string): void {
      if (options.maxFailures === 0) return;
      const list = recent(name);
      if (list.length >= options.maxFailures) {
        throw new TooManyAttemptsError(Math.max(1, Math.ceil((list[0]! + windowMs - now()) / 1000)));
      }
    },
    fail(name: string): void {
      if (options.maxFailures === 0) return;
      if (!failures.has(name) && failures.size >= MAX_TRACKED_NAMES) failures.delete(failures.keys().next().value!);
      failures.set(name, [...recent(name), now()].slice(-options.maxFailures));
    },
    succeed(name: string): void {
      failures.delete(name);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
