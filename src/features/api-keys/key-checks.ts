/** What a change of keys checks first: that the caller may see the key (and the merchant it names), and that the key may still change. */
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Principal } from '../../lib/principal.js';
import type { MerchantsDal } from '../merchants/merchants-dal.js';
import type { ApiKeysDal } from './api-keys-dal.js';

/** The caller may see the key: its customer's, and for merchant callers its merchant's. No caller: the operator. */
function isVisible(key: { customerId: string; merchantId: string | null }, caller: Principal | null): boolean {
  return (
    !caller || (key.customerId === caller.customerId && (!caller.merchantId || key.merchantId === caller.merchantId))
  );
}

/** Locks a key the caller may see, or answers 404 as if it did not exist. */
export async function lockVisible(keyId: string, caller: Principal | null, keys: ApiKeysDal) {
  const key = await keys.lockKey(keyId);
  if (!key || !isVisible(key, caller)) throw new NotFoundError('api_key_not_found');
  return key;
}

/** The merchant a caller may act for: its own for merchant callers, one of its customer's otherwise. */
export async function visibleMerchant(
  merchantsDal: Pick<MerchantsDal, 'belongsToCustomer'>,
  caller: Principal,
  merchantId: string,
): Promise<string> {
  const ok = caller.merchantId
    ? caller.merchantId === merchantId
    : await merchantsDal.belongsToCustomer(caller.customerId, merchantId);
  if (!ok) throw new NotFoundError('merchant_not_found');
  return merchantId;
}

/**
 * PATCH and roll change only keys that still work and were not rolled: a
 * rolled key in its grace period keeps the end its roll gave it, or rolling a
 * leaked key would not get rid of it.
 */
export function assertChangeable(key: { status: string; expired: boolean; replacedBy: string | null }): void {
  if (key.status !== 'ENABLED' || key.expired) {
    throw new ConflictError(
      'api_key_not_enabled',
      `This API key is ${key.status === 'ENABLED' ? 'EXPIRED' : key.status}; only ENABLED keys can be changed or rolled.`,
    );
  }
  if (key.replacedBy) {
    throw new ConflictError(
      'api_key_not_enabled',
      'This API key was rolled and is in its grace period; change or roll its replacement instead.',
    );
  }
}
