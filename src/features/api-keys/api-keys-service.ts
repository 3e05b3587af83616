/** Rules of API keys: who may create, list and revoke which keys, and key authentication. */
import type { Db } from '../../db/database.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../errors.js';
import { offsetOf, type PageRequest, toPage } from '../../lib/pagination.js';
import { sha256Hex } from '../../lib/secrets.js';
import { type ChangeContext, recordAudit } from '../audit/audit-dal.js';
import { normaliseEmail } from '../auth/auth-service.js';
import type { Principal, UserType } from '../auth/principal.js';
import { API_KEY_PREFIX, generateApiKey, isWellFormedApiKey, lastFour, maskApiKey } from './api-key-format.js';
import type { ApiKeyRow, ApiKeysDal } from './api-keys-dal.js';
import type { MerchantsDal } from '../merchants/merchants-dal.js';
import type { LastUseRecorder } from './last-use-recorder.js';
import { type KeyCaches, keyChangeNotice } from './key-change-feed.js';

export const MAX_ENABLED_KEYS_PER_USER = 10;

export interface CreateKeyRequest {
  user: string;
  customer_id: string;
  merchant_id?: string | undefined;
}

export interface ListKeysRequest extends PageRequest {
  status: 'ENABLED' | 'DELETED';
  username?: string | undefined;
  merchant_id?: string | undefined;
}

export interface ApiKeysServiceDeps {
  db: Db;
  dal: ApiKeysDal;
  merchantsDal: MerchantsDal;
  caches: KeyCaches;
  lastUse: LastUseRecorder;
}

const invalidKey = () => new UnauthorizedError('invalid_api_key', 'The API key is not valid.');

function createdRecord(key: { id: string; status: 'ENABLED' | 'DELETED'; createdAt: Date }, apiKey: string, owner: { email: string; type: UserType; customerId: string; merchantId: string | null }) {
  return {
    id: key.id,
    api_key: apiKey,
    user: owner.email,
    user_type: owner.type,
    customer_id: owner.customerId,
    ...(owner.merchantId ? { merchant_id: owner.merchantId } : {}),
    status: key.status,
    create_date: key.createdAt.toISOString(),
  };
}

function listedRecord(row: ApiKeyRow) {
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
  };
}

export function createApiKeysService(deps: ApiKeysServiceDeps) {
  const { db, dal, merchantsDal, caches, lastUse } = deps;

  /** The merchant a caller may act for: its own for merchant callers, one of its customer's otherwise. */
  async function visibleMerchant(caller: Principal, merchantId: string): Promise<string> {
    const ok = caller.merchantId ? caller.merchantId === merchantId : await merchantsDal.belongsToCustomer(caller.customerId, merchantId);
    if (!ok) throw new NotFoundError('No such merchant.', 'merchant_not_found');
    return merchantId;
  }

  /** Creates a key for `owner`; shared by the HTTP path and the operator's command line. */
  async function issue(owner: { email: string; customerId: string; merchantId: string | null }, context: ChangeContext) {
    const type: UserType = owner.merchantId ? 'MERCHANT' : 'CUSTOMER';
    const apiKey = generateApiKey();
    const record = await db.transaction(async (tx) => {
      const user = await dal.lockOrCreateUser({ ...owner, type }, tx);
      if (user.type !== type || user.customerId !== owner.customerId || user.merchantId !== owner.merchantId) {
        throw new ConflictError('user_conflict', 'This e-mail already belongs to a user of another type, customer or merchant.');
      }
      if ((await dal.countEnabledKeys(user.id, tx)) >= MAX_ENABLED_KEYS_PER_USER) {
        throw new ConflictError('api_key_limit_reached', `A user may hold at most ${MAX_ENABLED_KEYS_PER_USER} enabled API keys; delete one first.`);
      }
      const key = await dal.insertKey(
        { userId: user.id, customerId: owner.customerId, merchantId: owner.merchantId, keyHash: sha256Hex(apiKey), displayPrefix: API_KEY_PREFIX, last4: lastFour(apiKey) },
        tx,
      );
      await recordAudit(tx, context, {
        action: 'api_key.created',
        customerId: owner.customerId,
        targetType: 'api_key',
        targetId: key.id,
        details: { user: owner.email, user_type: type, merchant_id: owner.merchantId },
      });
      await tx.execute(keyChangeNotice(owner.customerId));
      return createdRecord(key, apiKey, { ...owner, type });
    });
    caches.changed(owner.customerId);
    return record;
  }

  return {
    async create(caller: Principal, request: CreateKeyRequest, context: ChangeContext) {
      if (request.customer_id !== caller.customerId) throw new NotFoundError('No such customer.', 'customer_not_found');
      if (!request.merchant_id && caller.merchantId) {
        throw new ForbiddenError('A merchant caller may only create keys for its own merchant.');
      }
      const merchantId = request.merchant_id ? await visibleMerchant(caller, request.merchant_id) : null;
      return issue({ email: normaliseEmail(request.user), customerId: caller.customerId, merchantId }, context);
    },

    /** The operator's `feegate keys issue`: no caller, the same rules otherwise. */
    async issueByOperator(owner: { email: string; customerId: string; merchantId: string | null }, context: ChangeContext) {
      if (owner.merchantId && !(await merchantsDal.belongsToCustomer(owner.customerId, owner.merchantId))) {
        throw new NotFoundError(`Merchant ${owner.merchantId} does not belong to customer ${owner.customerId}.`, 'merchant_not_found');
      }
      return issue({ ...owner, email: normaliseEmail(owner.email) }, context);
    },

    /** Pages are cached briefly per request shape; any key change of the customer drops them. */
    async list(caller: Principal, request: ListKeysRequest) {
      const merchantId = request.merchant_id ? await visibleMerchant(caller, request.merchant_id) : caller.merchantId;
      const email = request.username === undefined ? undefined : normaliseEmail(request.username);
      const cacheKey = JSON.stringify([caller.customerId, merchantId, request.status, email, request.page, request.size]);
      const token = caches.listings.token(caller.customerId);
      const cached = caches.listings.get(cacheKey) as ReturnType<typeof toPage<ReturnType<typeof listedRecord>>> | undefined;
      if (cached) return cached;
      const { rows, total } = await dal.list(
        { customerId: caller.customerId, merchantId, status: request.status, email },
        { limit: request.size, offset: offsetOf(request) },
      );
      const page = toPage(rows.map(listedRecord), total, request);
      caches.listings.set(cacheKey, caller.customerId, page, token);
      return page;
    },

    /** Idempotent; refused at once by every instance (NOTIFY is sent by the same transaction). */
    async remove(caller: Principal, keyId: string, context: ChangeContext): Promise<void> {
      const revoked = await db.transaction(async (tx) => {
        const key = await dal.lockKey(keyId, tx);
        const visible = key && key.customerId === caller.customerId && (!caller.merchantId || key.merchantId === caller.merchantId);
        if (!visible) throw new NotFoundError('No such API key.', 'api_key_not_found');
        if (key.status === 'DELETED') return key;
        await dal.markDeleted(key.id, tx);
        await recordAudit(tx, context, {
          action: 'api_key.deleted',
          customerId: key.customerId,
          targetType: 'api_key',
          targetId: key.id,
        });
        await tx.execute(keyChangeNotice(key.customerId, key.keyHash));
        return key;
      });
      caches.changed(revoked.customerId, revoked.keyHash);
    },

    async authenticate(apiKey: string): Promise<Principal> {
      if (!isWellFormedApiKey(apiKey)) throw invalidKey();
      const keyHash = sha256Hex(apiKey);
      let principal = caches.verifiedKeys.get(keyHash);
      if (!principal) {
        const token = caches.verifiedKeys.token(keyHash);
        const key = await dal.findByHash(keyHash);
        if (!key || key.status !== 'ENABLED') throw invalidKey();
        principal = {
          auth: 'api_key',
          userId: key.userId,
          email: key.email,
          userType: key.merchantId ? 'MERCHANT' : 'CUSTOMER',
          customerId: key.customerId,
          merchantId: key.merchantId,
          sessionId: null,
          apiKeyId: key.id,
        };
        caches.verifiedKeys.set(keyHash, keyHash, principal, token);
      }
      lastUse.touch(principal.apiKeyId!);
      return principal;
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
