/**
 * The permission catalogue (contract section 22): what an API key may do, and
 * what a login user's role amounts to in the same terms, so one check serves
 * both. Each authenticated route declares the permission it needs (its
 * `config.permission`); the authentication hook checks it before the handler.
 */
import type { Principal, Role } from './principal.js';

export const PERMISSIONS = [
  'api_keys:read',
  'api_keys:write',
  'merchants:read',
  'merchants:write',
  'fee_rules:read',
  'fee_rules:write',
  'webhooks:read',
  'webhooks:write',
  'users:read',
  'audit:read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** What a route declares: a permission, or `none` when any authenticated caller may call it (its own rules decide the rest). */
export type RoutePermission = Permission | 'none';

/** The resources of the catalogue, in its order, with the levels each offers (users and audit are read only). */
export const PERMISSION_RESOURCES = [...new Set(PERMISSIONS.map((p) => p.split(':')[0]!))];

const ALL: ReadonlySet<Permission> = new Set(PERMISSIONS);
const READS: ReadonlySet<Permission> = new Set(PERMISSIONS.filter((p) => p.endsWith(':read')));

/** A key's permissions when it names none: all for `full`, every `:read` for `read_only`. */
export function defaultPermissions(access: 'full' | 'read_only'): Permission[] {
  return [...(access === 'full' ? ALL : READS)];
}

/** Whether `access` allows `permission`: a read_only key holds reads only. */
export function accessAllows(access: 'full' | 'read_only', permission: Permission): boolean {
  return access === 'full' || READS.has(permission);
}

/**
 * A login user's role in catalogue terms: VIEWER every `:read`; MEMBER and ADMIN
 * everything (what only an ADMIN may do, managing users, is no catalogue
 * permission: that rule stays the users service's).
 */
const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = { ADMIN: ALL, MEMBER: ALL, VIEWER: READS };

export function isPermission(value: string): value is Permission {
  return (ALL as ReadonlySet<string>).has(value);
}

/** The catalogue's order, without repeats: how a key's permissions are stored and shown. */
export function inCatalogueOrder(permissions: Iterable<Permission>): Permission[] {
  const held = new Set(permissions);
  return PERMISSIONS.filter((p) => held.has(p));
}

/** What the caller holds: its key's permissions, or its role's. A principal of neither holds nothing. */
export function permissionsOf(principal: Principal): ReadonlySet<Permission> {
  if (principal.permissions) return principal.permissions;
  return principal.role ? ROLE_PERMISSIONS[principal.role] : new Set();
}
