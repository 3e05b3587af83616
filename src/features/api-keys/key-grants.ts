/**
 * A key never grants more than it has (docs/key-lifecycle.md): what a key
 * caller creates, rolls or sets on a key must lie within its own expiry, rate
 * limit, access, permissions and allowed addresses. Token callers are people of the customer and are bound by
 * none of this.
 */
import { ForbiddenError } from '../../errors.js';
import { rangesOutside } from '../../lib/allowed-ips.js';
import type { Permission } from '../../lib/permissions.js';
import type { Principal } from '../../lib/principal.js';
import type { KeyLifecycle } from './api-keys-dal.js';

/** What a key lets its holder do beyond who it is: until when, how fast, what, from where. */
export interface Grant {
  expiresAt: Date | null;
  rateLimit: { limit: number; windowSeconds: number } | null;
  access: 'full' | 'read_only';
  permissions: readonly Permission[];
  /** Canonical; empty: any address. */
  allowedIps: readonly string[];
}

export type GrantField = 'expires_at' | 'rate_limit' | 'access' | 'permissions' | 'allowed_ips';

/** The grant of an API key caller; null for a token caller, whom no key bounds. */
export function callerGrant(caller: Principal): Grant | null {
  if (caller.auth !== 'api_key') return null;
  return {
    expiresAt: caller.keyExpiresAt ?? null,
    rateLimit: caller.rateLimit
      ? { limit: caller.rateLimit.limit, windowSeconds: caller.rateLimit.windowSeconds }
      : null,
    access: caller.readOnly ? 'read_only' : 'full',
    permissions: [...(caller.permissions ?? [])],
    allowedIps: caller.allowedIps ?? [],
  };
}

export function grantOf(key: KeyLifecycle): Grant {
  return {
    expiresAt: key.expiresAt,
    rateLimit: key.rateLimit === null ? null : { limit: key.rateLimit, windowSeconds: key.rateLimitWindowSeconds! },
    access: key.access,
    permissions: key.permissions,
    allowedIps: key.allowedIps,
  };
}

/**
 * Whether `wanted` is no more than `bound` in one field. An expiry is no later
 * (none is the latest of all). A rate limit is no looser when it allows no more
 * requests per window over a window no shorter: then in any stretch of time it
 * admits no more requests than the bound does, both in a burst and on average
 * (a comparison of rates alone would let 1000 an hour follow 100 a minute).
 */
const within: { [F in GrantField]: (wanted: Grant, bound: Grant) => boolean } = {
  expires_at: (w, b) => b.expiresAt === null || (w.expiresAt !== null && w.expiresAt <= b.expiresAt),
  rate_limit: (w, b) =>
    b.rateLimit === null ||
    (w.rateLimit !== null &&
      w.rateLimit.limit <= b.rateLimit.limit &&
      w.rateLimit.windowSeconds >= b.rateLimit.windowSeconds),
  access: (w, b) => b.access === 'full' || w.access === 'read_only',
  permissions: (w, b) => w.permissions.every((p) => b.permissions.includes(p)),
  // Every wanted range inside one of the bound's; none (any address) only within a bound of none.
  allowed_ips: (w, b) =>
    b.allowedIps.length === 0 || (w.allowedIps.length > 0 && rangesOutside(w.allowedIps, b.allowedIps).length === 0),
};

function describe(field: GrantField, grant: Grant, wanted: Grant): string {
  if (field === 'permissions')
    return `does not hold ${wanted.permissions.filter((p) => !grant.permissions.includes(p)).join(', ')}`;
  if (field === 'allowed_ips')
    return 'may be used only from its own allowed_ips, and every new range must lie inside one';
  if (field === 'expires_at')
    return grant.expiresAt ? `expires at ${grant.expiresAt.toISOString()}` : 'does not expire';
  if (field === 'rate_limit')
    return grant.rateLimit
      ? `allows ${grant.rateLimit.limit} requests per ${grant.rateLimit.windowSeconds} s`
      : 'has no rate limit';
  return `has ${grant.access} access`;
}

/**
 * Refuses with 403 key_escalation when `wanted` exceeds the caller's `bound` in
 * any of `fields`. With `current` (a change of an existing key), a field that is
 * no looser than the key already is passes too: tightening a key grants nothing.
 */
export function assertWithin(wanted: Grant, bound: Grant, fields: readonly GrantField[], current?: Grant): void {
  const exceeded = fields.filter((f) => !within[f](wanted, bound) && !(current && within[f](wanted, current)));
  if (exceeded.length === 0) return;
  throw new ForbiddenError(
    'key_escalation',
    `An API key cannot grant more than it has: the calling key ${exceeded.map((f) => describe(f, bound, wanted)).join(' and ')}; ` +
      `the request asks for more in ${exceeded.join(', ')}. Ask for no more than that, or use a login.`,
  );
}
