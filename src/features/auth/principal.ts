/** Who is calling: the same shape whether a token or an API key proved it. */
export type UserType = 'CUSTOMER' | 'MERCHANT';

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
  /** The key, for API key callers. */
  apiKeyId: string | null;
}

export function isMerchantCaller(principal: Principal): boolean {
  return principal.merchantId !== null;
}
