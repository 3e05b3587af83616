/** API keys as answers, events and audit details show them: never the secret but at its creation. */
import type { UserType } from '../../lib/principal.js';
import { API_KEY_PREFIX, lastFour, maskApiKey } from './api-key-format.js';
import type { ApiKeyRecordRow, KeyCreator, KeyLifecycle } from './api-keys-dal.js';

/** Who created a key, as answers show it: null for keys made before creators were recorded. */
export function creatorRecord(creator: KeyCreator) {
  return creator.createdByType === null
    ? null
    : { type: creator.createdByType, id: creator.createdById, email: creator.createdByEmail };
}

export function lifecycleRecord(key: KeyLifecycle) {
  return {
    name: key.name,
    expires_at: key.expiresAt?.toISOString() ?? null,
    access: key.access,
    rate_limit: key.rateLimit === null ? null : { limit: key.rateLimit, window_seconds: key.rateLimitWindowSeconds! },
    permissions: key.permissions,
    allowed_ips: key.allowedIps,
  };
}

export function createdRecord(
  key: { id: string; status: 'ENABLED' | 'DELETED'; createdAt: Date },
  apiKey: string,
  owner: { email: string; type: UserType; customerId: string; merchantId: string | null },
  lifecycle: KeyLifecycle,
  creator: KeyCreator,
) {
  return {
    id: key.id,
    api_key: apiKey,
    user: owner.email,
    user_type: owner.type,
    customer_id: owner.customerId,
    ...(owner.merchantId ? { merchant_id: owner.merchantId } : {}),
    status: key.status,
    create_date: key.createdAt.toISOString(),
    // A new key has not changed since it was made.
    update_date: key.createdAt.toISOString(),
    ...lifecycleRecord(lifecycle),
    created_by: creatorRecord(creator),
  };
}

/** A new key's record as events carry it: the key masked, as listings show it. */
export function masked(record: ReturnType<typeof createdRecord>) {
  return { ...record, api_key: maskApiKey(API_KEY_PREFIX, lastFour(record.api_key)) };
}

export function listedRecord(row: ApiKeyRecordRow) {
  return {
    id: row.id,
    api_key: maskApiKey(row.displayPrefix, row.last4),
    user: row.email,
    user_type: row.merchantId ? ('MERCHANT' as const) : ('CUSTOMER' as const),
    customer_id: [row.customerId],
    ...(row.merchantId ? { merchant_id: [row.merchantId] } : {}),
    status: row.status,
    create_date: row.createdAt.toISOString(),
    update_date: row.updatedAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    ...lifecycleRecord(row),
    created_by: creatorRecord(row),
  };
}
