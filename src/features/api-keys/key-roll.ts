/**
 * What a roll (POST /v1/api-keys/{id}/roll) writes once its checks passed: the
 * successor, with the old key's owner, settings and creator and in its roll
 * chain; the old key's end of grace; the audit records of both keys; the event;
 * and the notice that drops the old key from every instance's cache.
 */
import type { WriteScope } from '../../db/unit-of-work.js';
import type { Principal, UserType } from '../../lib/principal.js';
import { sha256Hex } from '../../lib/secrets.js';
import { API_KEY_PREFIX, lastFour } from './api-key-format.js';
import { createdRecord, lifecycleRecord, masked } from './api-key-records.js';
import type { ApiKeysDal, KeyCreator, KeyLifecycle } from './api-keys-dal.js';
import { type KeyCaches, keyChangeNotice } from './key-change-feed.js';

type Scope = Pick<WriteScope<{ apiKeys: ApiKeysDal }>, 'dal' | 'audit' | 'emit' | 'notify' | 'afterCommit'>;
type LockedKey = NonNullable<Awaited<ReturnType<ApiKeysDal['lockKey']>>>;

/** The caller who rolls a key, and so is handed its successor's secret. */
const rollerOf = (caller: Principal): { type: 'user' | 'api_key'; id: string } =>
  caller.auth === 'api_key' && caller.apiKeyId
    ? { type: 'api_key', id: caller.apiKeyId }
    : { type: 'user', id: caller.userId };

/**
 * Replaces the locked key `old` by `roll.apiKey` in the unit of work of `scope`;
 * the old key keeps working for `roll.gracePeriodSeconds` (0: refused at once).
 * Answers the successor's record, its secret shown this once.
 */
export async function rollKeyIn(
  scope: Scope,
  old: LockedKey,
  roll: { apiKey: string; caller: Principal; gracePeriodSeconds: number },
  caches: Pick<KeyCaches, 'changed'>,
) {
  const { apiKey, gracePeriodSeconds } = roll;
  const { apiKeys } = scope.dal;
  const lifecycle: KeyLifecycle = {
    name: old.name,
    expiresAt: old.expiresAt,
    access: old.access,
    rateLimit: old.rateLimit,
    rateLimitWindowSeconds: old.rateLimitWindowSeconds,
    permissions: old.permissions,
    allowedIps: old.allowedIps,
  };
  // A roll replaces a key: its successor keeps the creator, so revoking a creator's keys takes the whole chain.
  const creator: KeyCreator = {
    createdByType: old.createdByType,
    createdById: old.createdById,
    createdByEmail: old.createdByEmail,
  };
  const key = await apiKeys.insertKey({
    userId: old.userId,
    customerId: old.customerId,
    merchantId: old.merchantId,
    keyHash: sha256Hex(apiKey),
    displayPrefix: API_KEY_PREFIX,
    last4: lastFour(apiKey),
    rollChainId: old.rollChainId ?? old.id,
    rolledBy: rollerOf(roll.caller),
    ...lifecycle,
    ...creator,
  });
  const oldExpiresAt = await apiKeys.markRolled(old.id, key.id, gracePeriodSeconds);
  const type: UserType = old.merchantId ? 'MERCHANT' : 'CUSTOMER';
  await scope.audit({
    action: 'api_key.rolled',
    customerId: old.customerId,
    targetType: 'api_key',
    targetId: old.id,
    details: {
      new_key_id: key.id,
      grace_period_seconds: gracePeriodSeconds,
      expires_at: oldExpiresAt.toISOString(),
    },
  });
  await scope.audit({
    action: 'api_key.created',
    customerId: old.customerId,
    targetType: 'api_key',
    targetId: key.id,
    details: {
      user: old.email,
      user_type: type,
      merchant_id: old.merchantId,
      rolled_from: old.id,
      ...lifecycleRecord(lifecycle),
    },
  });
  const record = createdRecord(
    key,
    apiKey,
    { email: old.email, type, customerId: old.customerId, merchantId: old.merchantId },
    lifecycle,
    creator,
  );
  await scope.emit({
    type: 'API_KEY_ROLLED',
    customerId: old.customerId,
    data: { ...masked(record), rolled_from: old.id, rolled_from_expires_at: oldExpiresAt.toISOString() },
  });
  await scope.notify(keyChangeNotice(old.customerId, old.keyHash));
  scope.afterCommit(() => caches.changed(old.customerId, old.keyHash));
  return record;
}
