/** A key's settings (docs/key-lifecycle.md) as a request sends them: a new key's, or a change of one. */
import { ValidationError } from '../../errors.js';
import { canonicalAllowedIps, invalidAllowedIps } from '../../lib/allowed-ips.js';
import { parseInstant } from '../../lib/instant.js';
import { accessAllows, defaultPermissions, inCatalogueOrder, type Permission } from '../../lib/permissions.js';
import type { KeyChanges, KeyLifecycle } from './api-keys-dal.js';
import { MAX_KEY_LIFETIME_YEARS } from './key-settings-schemas.js';
import type { Grant, GrantField } from './key-grants.js';

/** Optional settings of a new key (docs/key-lifecycle.md). */
export interface KeySettings {
  name?: string | undefined;
  expires_at?: string | undefined;
  access?: 'full' | 'read_only' | undefined;
  rate_limit?: { limit: number; window_seconds: number } | undefined;
  permissions?: Permission[] | undefined;
  allowed_ips?: string[] | undefined;
}

export interface UpdateKeyRequest {
  name?: string | null | undefined;
  expires_at?: string | null | undefined;
  rate_limit?: { limit: number; window_seconds: number } | null | undefined;
  permissions?: Permission[] | undefined;
  allowed_ips?: string[] | undefined;
}

/** Allowed addresses as stored: 400 naming each item that is not an address or range. */
function checkedAllowedIps(items: readonly string[]): string[] {
  const invalid = invalidAllowedIps(items);
  if (invalid.length > 0)
    throw new ValidationError(invalid.map(({ index, message }) => ({ field: `allowed_ips[${index}]`, message })));
  return canonicalAllowedIps(items);
}

/** Refuses (400, naming each) the permissions a key of `access` cannot hold: a read_only key holds reads only. */
export function assertAccessAllows(access: 'full' | 'read_only', permissions: readonly Permission[]): void {
  const errors = permissions.flatMap((permission, index) =>
    accessAllows(access, permission)
      ? []
      : [{ field: `permissions[${index}]`, message: `"${permission}" needs access full: a read_only key only reads` }],
  );
  if (errors.length > 0) throw new ValidationError(errors);
}

/** An expiry must lie ahead, and not too far: keys that never rotate are what expiry exists to prevent. */
function parseExpiry(value: string, now = Date.now()): Date {
  const at = parseInstant('expires_at', value, 'The body is not valid.');
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + MAX_KEY_LIFETIME_YEARS);
  if (at.getTime() <= now) throw new ValidationError([{ field: 'expires_at', message: 'must be in the future' }]);
  if (at > latest)
    throw new ValidationError([
      { field: 'expires_at', message: `must be at most ${MAX_KEY_LIFETIME_YEARS} years ahead` },
    ]);
  return at;
}

/** A new key's settings: what was sent, else what the creating key has (`inherited`), else none. */
export function lifecycleOf(settings: KeySettings, inherited: Grant | null = null): KeyLifecycle {
  const rateLimit = settings.rate_limit
    ? { limit: settings.rate_limit.limit, windowSeconds: settings.rate_limit.window_seconds }
    : (inherited?.rateLimit ?? null);
  const access = settings.access ?? inherited?.access ?? 'full';
  if (settings.permissions) assertAccessAllows(access, settings.permissions);
  // Inherited permissions are the creating key's that this key's access allows.
  const permissions =
    settings.permissions ??
    (inherited ? [...inherited.permissions].filter((p) => accessAllows(access, p)) : defaultPermissions(access));
  return {
    name: settings.name ?? null,
    expiresAt: settings.expires_at === undefined ? (inherited?.expiresAt ?? null) : parseExpiry(settings.expires_at),
    access,
    rateLimit: rateLimit?.limit ?? null,
    rateLimitWindowSeconds: rateLimit?.windowSeconds ?? null,
    permissions: inCatalogueOrder(permissions),
    allowedIps: settings.allowed_ips ? checkedAllowedIps(settings.allowed_ips) : [...(inherited?.allowedIps ?? [])],
  };
}

/** A PATCH as the columns it sets, and the granted settings among them (bounded for a key caller). */
export function changesOf(changes: UpdateKeyRequest): { set: KeyChanges; granted: GrantField[] } {
  const set: KeyChanges = {};
  const granted: GrantField[] = [];
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.expires_at !== undefined) {
    set.expiresAt = changes.expires_at === null ? null : parseExpiry(changes.expires_at);
    granted.push('expires_at');
  }
  if (changes.rate_limit !== undefined) {
    set.rateLimit = changes.rate_limit?.limit ?? null;
    set.rateLimitWindowSeconds = changes.rate_limit?.window_seconds ?? null;
    granted.push('rate_limit');
  }
  if (changes.permissions !== undefined) {
    set.permissions = inCatalogueOrder(changes.permissions);
    granted.push('permissions');
  }
  if (changes.allowed_ips !== undefined) {
    set.allowedIps = checkedAllowedIps(changes.allowed_ips);
    granted.push('allowed_ips');
  }
  return { set, granted };
}
