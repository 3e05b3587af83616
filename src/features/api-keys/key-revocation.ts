/**
 * Revoking a key, wherever it is asked for (DELETE /v1/api-keys/{id}, a user
 * disabled with revoke_keys): the same audit record and event, and refused at
 * once by every instance (NOTIFY from the same transaction).
 */
import type { WriteScope } from '../../db/unit-of-work.js';
import { listedRecord } from './api-key-records.js';
import type { ApiKeysDal } from './api-keys-dal.js';
import { type KeyCaches, keyChangeNotice } from './key-change-feed.js';

type Scope = Pick<WriteScope<{ apiKeys: ApiKeysDal }>, 'dal' | 'audit' | 'emit' | 'notify' | 'afterCommit'>;

/** Revokes a locked ENABLED key in the unit of work of `scope`. */
export async function revokeKeyIn(
  scope: Scope,
  key: { id: string; customerId: string; keyHash: string },
  caches: Pick<KeyCaches, 'changed'>,
  details?: Record<string, unknown>,
): Promise<void> {
  await scope.dal.apiKeys.markDeleted(key.id);
  await scope.audit({
    action: 'api_key.deleted',
    customerId: key.customerId,
    targetType: 'api_key',
    targetId: key.id,
    ...(details ? { details } : {}),
  });
  await scope.emit({
    type: 'API_KEY_REVOKED',
    customerId: key.customerId,
    data: listedRecord((await scope.dal.apiKeys.findRecord(key.id))!),
  });
  await scope.notify(keyChangeNotice(key.customerId, key.keyHash));
  scope.afterCommit(() => caches.changed(key.customerId, key.keyHash));
}

/** Revokes every ENABLED key a user created (and the keys those created); answers how many. */
export async function revokeKeysCreatedByIn(
  scope: Scope,
  user: { id: string; customerId: string },
  caches: Pick<KeyCaches, 'changed'>,
): Promise<number> {
  const keys = await scope.dal.apiKeys.lockEnabledCreatedBy(user.customerId, user.id);
  for (const key of keys) await revokeKeyIn(scope, key, caches, { reason: 'creator_disabled', created_by: user.id });
  return keys.length;
}
