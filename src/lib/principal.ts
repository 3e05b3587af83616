import type { AllowedRanges } from './allowed-ips.js';
import type { Permission } from './permissions.js';

/** Who is calling: the same shape whether a token or an API key proved it. */
export type UserType = 'CUSTOMER' | 'MERCHANT';
/** What a login user may do: ADMIN everything, MEMBER all but managing users, VIEWER only reads. */
export const ROLES = ['ADMIN', 'MEMBER', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  auth: 'token' | 'api_key';
  userId: string;
  email: string;
  userType: UserType;
  customerId: string;
  /** Set for merchant callers, whose scope is that one merchant. */
  merchantId: string | null;
  /** The login family, for token callers (logout revokes it). */
  sessionId: string | null;
  /** Token callers: the role the access token carries (null for key callers). */
  role: Role | null;
  /** The key, for API key callers. */
  apiKeyId: string | null;
  /** API key callers: a read_only key may use GET operations only. */
  readOnly?: boolean;
  /**
   * API key callers: the key's own rate limit, if it has one. `counter` names the
   * count, shared by every key of one roll chain (a roll never restarts it).
   */
  rateLimit?: { limit: number; windowSeconds: number; counter: string } | null;
  /** API key callers: when the key stops working (null: never). */
  keyExpiresAt?: Date | null;
  /** API key callers: the key's permissions (token callers hold their role's, src/lib/permissions.ts). */
  permissions?: ReadonlySet<Permission>;
  /** API key callers: the key's allowed_ips as stored (canonical; empty: any address), and parsed for matching. */
  allowedIps?: readonly string[];
  allowedRanges?: AllowedRanges | null;
}

export function isMerchantCaller(principal: Principal): boolean {
  return principal.merchantId !== null;
}
