/** Rules of API keys: who may create, list, change, roll and revoke which keys; key authentication is key-authentication.ts. */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import { offsetOf, type PageRequest, toPage } from '../../lib/pagination.js';
import { sha256Hex } from '../../lib/secrets.js';
import { type ChangeContext, SYSTEM_CONTEXT } from '../../lib/change-context.js';
import { normaliseEmail } from '../../lib/email.js';
import type { Principal, UserType } from '../../lib/principal.js';
import { API_KEY_PREFIX, generateApiKey, lastFour } from './api-key-format.js';
import { createdRecord, lifecycleRecord, listedRecord, masked } from './api-key-records.js';
import type { ApiKeyRecordRow, ApiKeysDal, ApiKeyStatus, KeyCreator, KeyLifecycle } from './api-keys-dal.js';
import type { MerchantsDal } from '../merchants/merchants-dal.js';
import type { LastUseRecorder } from './last-use-recorder.js';
import { createKeyAuthentication } from './key-authentication.js';
import { type KeyCaches, keyChangeNotice } from './key-change-feed.js';
import { assertChangeable, lockVisible, visibleMerchant } from './key-checks.js';
import { revokeKeyIn } from './key-revocation.js';
import { rollKeyIn } from './key-roll.js';
import { assertWithin, callerGrant, type Grant, grantOf, type GrantField } from './key-grants.js';
import { assertAccessAllows, changesOf, type KeySettings, lifecycleOf, type UpdateKeyRequest } from './key-settings.js';

export type { ApiKeyStatus };

export const MAX_ENABLED_KEYS_PER_USER = 10;
/** API_KEY_EXPIRING is sent this long before a key's expires_at. */
export const EXPIRING_WARNING_SECONDS = 7 * 86_400;
const EXPIRING_BATCH = 500;

export interface CreateKeyRequest extends KeySettings {
  user: string;
  customer_id: string;
  merchant_id?: string | undefined;
  /** The platform's: when sent, MERCHANT with merchant_id, CUSTOMER without. */
  user_type?: UserType | undefined;
}

export interface ListKeysRequest extends PageRequest {
  status: ApiKeyStatus;
  username?: string | undefined;
  merchant_id?: string | undefined;
}

/** The DALs a change of keys writes through. */
export interface ApiKeysDals {
  apiKeys: ApiKeysDal;
}

export interface ApiKeysServiceDeps {
  uow: UnitOfWork<ApiKeysDals>;
  dal: Pick<ApiKeysDal, 'list' | 'findByHash'>;
  merchantsDal: Pick<MerchantsDal, 'belongsToCustomer'>;
  caches: KeyCaches;
  lastUse: LastUseRecorder;
}

const ALL_GRANT_FIELDS: readonly GrantField[] = ['expires_at', 'rate_limit', 'access', 'permissions', 'allowed_ips'];

/** The caller who creates a key: its login user, or its API key (named with its user's e-mail). */
const creatorOf = (caller: Principal): KeyCreator =>
  caller.auth === 'api_key'
    ? { createdByType: 'api_key', createdById: caller.apiKeyId, createdByEmail: caller.email }
    : { createdByType: 'user', createdById: caller.userId, createdByEmail: caller.email };

const OPERATOR_CREATOR: KeyCreator = { createdByType: 'operator', createdById: null, createdByEmail: null };

export function createApiKeysService(deps: ApiKeysServiceDeps) {
  const { uow, dal, merchantsDal, caches } = deps;

  /** What bounds a key caller's change of `key`: for its own key, the key as locked now, not as it was when the request authenticated. */
  function boundFor(caller: Principal, key: { id: string } & KeyLifecycle): Grant | null {
    return key.id === caller.apiKeyId ? grantOf(key) : callerGrant(caller);
  }

  /** Creates a key for `owner`; shared by the HTTP path and the operator's command line. */
  async function issue(
    owner: { email: string; customerId: string; merchantId: string | null },
    lifecycle: KeyLifecycle,
    context: ChangeContext,
    creator: KeyCreator,
  ) {
    const type: UserType = owner.merchantId ? 'MERCHANT' : 'CUSTOMER';
    const apiKey = generateApiKey();
    return uow.write(context, async ({ dal: { apiKeys }, audit, notify, emit, afterCommit }) => {
      const user = await apiKeys.lockOrCreateUser({ ...owner, type });
      if (user.type !== type || user.merchantId !== owner.merchantId) {
        throw new ConflictError(
          'user_conflict',
          "This e-mail already names one of this customer's integration users, of another type or merchant.",
        );
      }
      if ((await apiKeys.countEnabledKeys(user.id)) >= MAX_ENABLED_KEYS_PER_USER) {
        throw new ConflictError(
          'api_key_limit_reached',
          `A user may hold at most ${MAX_ENABLED_KEYS_PER_USER} enabled API keys; delete one first.`,
        );
      }
      const key = await apiKeys.insertKey({
        userId: user.id,
        customerId: owner.customerId,
        merchantId: owner.merchantId,
        keyHash: sha256Hex(apiKey),
        displayPrefix: API_KEY_PREFIX,
        last4: lastFour(apiKey),
        ...lifecycle,
        ...creator,
      });
      const record = createdRecord(key, apiKey, { ...owner, type }, lifecycle, creator);
      await audit({
        action: 'api_key.created',
        customerId: owner.customerId,
        targetType: 'api_key',
        targetId: key.id,
        details: { user: owner.email, user_type: type, merchant_id: owner.merchantId, ...lifecycleRecord(lifecycle) },
      });
      await emit({ type: 'API_KEY_CREATED', customerId: owner.customerId, data: masked(record) });
      await notify(keyChangeNotice(owner.customerId));
      afterCommit(() => caches.changed(owner.customerId));
      return record;
    });
  }

  return {
    async create(caller: Principal, request: CreateKeyRequest, context: ChangeContext) {
      if (request.user_type !== undefined && (request.user_type === 'MERCHANT') !== (request.merchant_id !== undefined))
        throw new ValidationError([
          {
            field: 'user_type',
            message: `must agree with merchant_id: MERCHANT with it, CUSTOMER without (merchant_id was ${request.merchant_id === undefined ? 'not sent' : 'sent'})`,
          },
        ]);
      if (request.customer_id !== caller.customerId) throw new NotFoundError('customer_not_found');
      if (!request.merchant_id && caller.merchantId) {
        throw new ForbiddenError('forbidden', 'A merchant caller may only create keys for its own merchant.');
      }
      // A key's keys inherit what it has, and may ask for less but never for more.
      const bound = callerGrant(caller);
      const lifecycle = lifecycleOf(request, bound);
      if (bound) assertWithin(grantOf(lifecycle), bound, ALL_GRANT_FIELDS);
      const merchantId = request.merchant_id ? await visibleMerchant(merchantsDal, caller, request.merchant_id) : null;
      return issue(
        { email: normaliseEmail(request.user), customerId: caller.customerId, merchantId },
        lifecycle,
        context,
        creatorOf(caller),
      );
    },

    /** The operator's `feegate keys issue`: no caller, the same rules otherwise. */
    async issueByOperator(
      owner: { email: string; customerId: string; merchantId: string | null },
      context: ChangeContext,
      settings: KeySettings = {},
    ) {
      if (owner.merchantId && !(await merchantsDal.belongsToCustomer(owner.customerId, owner.merchantId))) {
        throw new NotFoundError('merchant_not_found');
      }
      return issue({ ...owner, email: normaliseEmail(owner.email) }, lifecycleOf(settings), context, OPERATOR_CREATOR);
    },

    /** The operator's `feegate keys list`: every key of a customer (or of one of its merchants), every status, newest first. */
    async listByOperator(customerId: string, merchantId: string | null) {
      const rows: ApiKeyRecordRow[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = await dal.list({ customerId, merchantId }, { limit: 100, offset });
        rows.push(...page.rows);
        if (page.rows.length < 100) return rows.map(listedRecord);
      }
    },

    /**
     * API_KEY_EXPIRING for each key that expires within 7 days, once per expiry
     * (a moved expires_at is warned of again); answers how many were warned, so
     * a sweep goes on while there are more.
     */
    async warnExpiring(limit = EXPIRING_BATCH): Promise<number> {
      return uow.write(SYSTEM_CONTEXT, async ({ dal: { apiKeys }, emitAll }) => {
        const expiring = await apiKeys.claimExpiring(EXPIRING_WARNING_SECONDS, limit);
        await emitAll(
          expiring.map((row) => ({
            type: 'API_KEY_EXPIRING' as const,
            customerId: row.customerId,
            data: listedRecord(row),
          })),
        );
        return expiring.length;
      });
    },

    /**
     * PATCH: name, expiry, rate limit, permissions and allowed addresses;
     * audited, and pushed to every instance (all but the name are part of each
     * cached key). A key caller may set them within its own, or tighten the
     * key's; a key changing itself may only tighten.
     */
    async update(caller: Principal, keyId: string, changes: UpdateKeyRequest, context: ChangeContext) {
      const { set, granted } = changesOf(changes);
      return uow.write(context, async ({ dal: { apiKeys }, audit, notify, emit, afterCommit }) => {
        const key = await lockVisible(keyId, caller, apiKeys);
        assertChangeable(key);
        if (set.permissions) assertAccessAllows(key.access, set.permissions);
        const bound = boundFor(caller, key);
        if (bound) assertWithin(grantOf({ ...key, ...set }), bound, granted, grantOf(key));
        await apiKeys.updateKey(key.id, set);
        await audit({
          action: 'api_key.updated',
          customerId: key.customerId,
          targetType: 'api_key',
          targetId: key.id,
          // Addresses as stored (canonical), not as sent.
          details: { ...changes, ...(set.allowedIps ? { allowed_ips: set.allowedIps } : {}) },
        });
        const record = listedRecord((await apiKeys.findRecord(key.id))!);
        await emit({ type: 'API_KEY_UPDATED', customerId: key.customerId, data: record });
        await notify(keyChangeNotice(key.customerId, key.keyHash));
        afterCommit(() => caches.changed(key.customerId, key.keyHash));
        return record;
      });
    },

    /**
     * A new key with the same owner and settings, continuing the old one's
     * rate-limit count; the old one keeps working for the grace period (0:
     * refused at once) and can then be neither changed nor rolled again. Allowed
     * at the 10-key limit: a roll replaces a key, it does not add one. A key
     * caller rolls only keys that have no more than itself.
     */
    async roll(caller: Principal, keyId: string, gracePeriodSeconds: number, context: ChangeContext) {
      const apiKey = generateApiKey();
      return uow.write(context, async (scope) => {
        const old = await lockVisible(keyId, caller, scope.dal.apiKeys);
        assertChangeable(old);
        const bound = boundFor(caller, old);
        if (bound) assertWithin(grantOf(old), bound, ALL_GRANT_FIELDS);
        return rollKeyIn(scope, old, { apiKey, caller, gracePeriodSeconds }, caches);
      });
    },

    /** Pages are cached briefly per request shape (one read for concurrent misses); any key change of the customer drops them. */
    async list(caller: Principal, request: ListKeysRequest) {
      const merchantId = request.merchant_id
        ? await visibleMerchant(merchantsDal, caller, request.merchant_id)
        : caller.merchantId;
      const email = request.username === undefined ? undefined : normaliseEmail(request.username);
      const cacheKey = JSON.stringify([
        caller.customerId,
        merchantId,
        request.status,
        email,
        request.page,
        request.size,
      ]);
      const page = caches.listings.getOrLoad(cacheKey, caller.customerId, async () => {
        const { rows, total } = await dal.list(
          { customerId: caller.customerId, merchantId, status: request.status, email },
          { limit: request.size, offset: offsetOf(request) },
        );
        return toPage(rows.map(listedRecord), total, request);
      });
      return page as Promise<ReturnType<typeof toPage<ReturnType<typeof listedRecord>>>>;
    },

    /** Idempotent; refused at once by every instance (NOTIFY is sent by the same transaction). No caller: the operator's `keys revoke`. */
    async remove(caller: Principal | null, keyId: string, context: ChangeContext): Promise<void> {
      await uow.write(context, async (scope) => {
        const key = await lockVisible(keyId, caller, scope.dal.apiKeys);
        if (key.status === 'DELETED') return;
        await revokeKeyIn(scope, key, caches);
      });
    },

    /** The hot path of every request with a key (key-authentication.ts). */
    authenticate: createKeyAuthentication(deps),
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
