/** Queries of API keys and their integration users. Every function takes an optional transaction. */
import { and, count, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { type Db, queryRows } from '../../db/database.js';
import { apiKeys, merchants, users } from '../../db/schema.js';
import type { Permission } from '../../lib/permissions.js';
import type { UserType } from '../../lib/principal.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export interface KeyOwner {
  email: string;
  type: UserType;
  customerId: string;
  merchantId: string | null;
}

export type ApiKeyStatus = 'ENABLED' | 'DELETED' | 'EXPIRED';

export interface ApiKeyFilter {
  customerId: string;
  /** null: the customer's CUSTOMER keys; a merchant id: that merchant's keys. */
  merchantId: string | null;
  /** Absent: every status (the operator's listing). */
  status?: ApiKeyStatus | undefined;
  email?: string | undefined;
}

/** What a key is created with beyond its owner (docs/key-lifecycle.md). */
export interface KeyLifecycle {
  name: string | null;
  expiresAt: Date | null;
  access: 'full' | 'read_only';
  rateLimit: number | null;
  rateLimitWindowSeconds: number | null;
  /** Catalogue permissions (src/lib/permissions.ts), in catalogue order. */
  permissions: Permission[];
  /** Canonical addresses and CIDR ranges (src/lib/allowed-ips.ts); empty: any address. */
  allowedIps: string[];
}

/** Who created a key (migration 0016): all null for keys made before it was recorded. */
export interface KeyCreator {
  createdByType: 'user' | 'api_key' | 'operator' | null;
  /** The login user or the API key; null for the operator. */
  createdById: string | null;
  /** The login user's e-mail, or the e-mail of the API key's user; null for the operator. */
  createdByEmail: string | null;
}

const creatorColumns = {
  createdByType: apiKeys.createdByType,
  createdById: apiKeys.createdById,
  createdByEmail: apiKeys.createdByEmail,
};

/** What PATCH may change (access never: a key's access is fixed at its birth). */
export type KeyChanges = Partial<
  Pick<KeyLifecycle, 'name' | 'expiresAt' | 'rateLimit' | 'rateLimitWindowSeconds' | 'permissions' | 'allowedIps'>
>;

/** EXPIRED is not stored: an ENABLED key is EXPIRED once the database clock passes expires_at. */
const isExpired = sql`(${apiKeys.expiresAt} IS NOT NULL AND ${apiKeys.expiresAt} <= now())`;
const statusCondition: Record<ApiKeyStatus, SQL> = {
  ENABLED: sql`${apiKeys.status} = 'ENABLED' AND NOT ${isExpired}`,
  EXPIRED: sql`${apiKeys.status} = 'ENABLED' AND ${isExpired}`,
  DELETED: sql`${apiKeys.status} = 'DELETED'`,
};
const lifecycleColumns = {
  name: apiKeys.name,
  expiresAt: apiKeys.expiresAt,
  access: apiKeys.access,
  rateLimit: apiKeys.rateLimit,
  rateLimitWindowSeconds: apiKeys.rateLimitWindowSeconds,
  permissions: apiKeys.permissions,
  allowedIps: apiKeys.allowedIps,
};

const keyColumns = {
  id: apiKeys.id,
  email: users.email,
  customerId: apiKeys.customerId,
  merchantId: apiKeys.merchantId,
  displayPrefix: apiKeys.displayPrefix,
  last4: apiKeys.last4,
  status: sql<ApiKeyStatus>`CASE WHEN ${apiKeys.status} = 'ENABLED' AND ${isExpired} THEN 'EXPIRED' ELSE ${apiKeys.status}::text END`,
  createdAt: apiKeys.createdAt,
  updatedAt: apiKeys.updatedAt,
  lastUsedAt: apiKeys.lastUsedAt,
  ...lifecycleColumns,
  ...creatorColumns,
};

export interface ApiKeyRow {
  id: string;
  email: string;
  customerId: string;
  merchantId: string | null;
  displayPrefix: string;
  last4: string;
  status: ApiKeyStatus;
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
}

export type ApiKeyRecordRow = ApiKeyRow & KeyLifecycle & KeyCreator;

export function createApiKeysDal(db: Db) {
  return {
    /**
     * The customer's integration user of this e-mail, created if new, its row
     * locked: the key limit is counted under that lock. Only that customer's
     * integration users are looked at: neither another customer's users nor a
     * login user of the same e-mail can be found or changed through a key.
     */
    async lockOrCreateUser(owner: KeyOwner) {
      await db
        .insert(users)
        .values(owner)
        .onConflictDoNothing({ target: [users.customerId, users.email], where: isNull(users.passwordHash) });
      const [row] = await db
        .select({ id: users.id, type: users.type, merchantId: users.merchantId })
        .from(users)
        .where(and(eq(users.customerId, owner.customerId), eq(users.email, owner.email), isNull(users.passwordHash)))
        .for('update');
      return row!;
    },

    async countEnabledKeys(userId: string): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(apiKeys)
        .where(and(eq(apiKeys.userId, userId), statusCondition.ENABLED));
      return row?.n ?? 0;
    },

    /** `rollChainId`: a roll's successor names the first key of its chain. */
    async insertKey(
      key: {
        userId: string;
        customerId: string;
        merchantId: string | null;
        keyHash: string;
        displayPrefix: string;
        last4: string;
        rollChainId?: string;
        /** A roll's successor: who rolled it (they are handed its secret). */
        rolledBy?: { type: 'user' | 'api_key'; id: string };
      } & KeyLifecycle &
        KeyCreator,
    ) {
      const { rolledBy, ...columns } = key;
      const [row] = await db
        .insert(apiKeys)
        .values({ ...columns, rolledByType: rolledBy?.type ?? null, rolledById: rolledBy?.id ?? null })
        .returning({ id: apiKeys.id, status: apiKeys.status, createdAt: apiKeys.createdAt });
      return row!;
    },

    /** The key behind a hash, with its owner: one indexed lookup. */
    async findByHash(keyHash: string) {
      const [row] = await db
        .select({
          id: apiKeys.id,
          status: apiKeys.status,
          userId: apiKeys.userId,
          email: users.email,
          userEnabled: users.enabled,
          customerId: apiKeys.customerId,
          merchantId: apiKeys.merchantId,
          rollChainId: apiKeys.rollChainId,
          // Null for CUSTOMER keys; an INACTIVE merchant's keys are refused.
          merchantStatus: merchants.status,
          ...lifecycleColumns,
        })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .leftJoin(merchants, eq(merchants.id, apiKeys.merchantId))
        .where(eq(apiKeys.keyHash, keyHash))
        .limit(1);
      return row;
    },

    async list(filter: ApiKeyFilter, page: { limit: number; offset: number }) {
      const conditions: SQL[] = [
        eq(apiKeys.customerId, filter.customerId),
        filter.merchantId === null ? isNull(apiKeys.merchantId) : eq(apiKeys.merchantId, filter.merchantId),
      ];
      if (filter.status !== undefined) conditions.push(statusCondition[filter.status]);
      if (filter.email !== undefined) conditions.push(eq(users.email, filter.email));
      const where = and(...conditions);
      const [rows, [total]] = await Promise.all([
        db
          .select(keyColumns)
          .from(apiKeys)
          .innerJoin(users, eq(users.id, apiKeys.userId))
          .where(where)
          .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
          .limit(page.limit)
          .offset(page.offset),
        // The total needs the users table only to filter by e-mail.
        filter.email === undefined
          ? db.select({ n: count() }).from(apiKeys).where(where)
          : db.select({ n: count() }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(where),
      ]);
      return { rows: rows satisfies ApiKeyRecordRow[], total: total?.n ?? 0 };
    },

    /** One key's record, as listings show it. */
    async findRecord(id: string): Promise<ApiKeyRecordRow | undefined> {
      const [row] = await db
        .select(keyColumns)
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(eq(apiKeys.id, id));
      return row;
    },

    /**
     * Up to `limit` ENABLED keys (not rolled) that expire within `withinSeconds`
     * and were not warned of this expiry yet, marked warned, with their records:
     * claimed with SKIP LOCKED, so instances sweeping at once warn each key once.
     */
    async claimExpiring(withinSeconds: number, limit: number): Promise<ApiKeyRecordRow[]> {
      const claimed = await db
        .update(apiKeys)
        .set({ expiryWarnedFor: sql`${apiKeys.expiresAt}` })
        .where(
          sql`${apiKeys.id} IN (
            SELECT id FROM api_keys
            WHERE status = 'ENABLED' AND replaced_by IS NULL AND expires_at IS NOT NULL
              AND expires_at > now() AND expires_at <= now() + make_interval(secs => ${withinSeconds})
              AND expiry_warned_for IS DISTINCT FROM expires_at
            ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
        )
        .returning({ id: apiKeys.id });
      if (claimed.length === 0) return [];
      return db
        .select(keyColumns)
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(sql`${apiKeys.id} = ANY(${toUuidArray(claimed.map((c) => c.id))}::uuid[])`);
    },

    /** Locks a key for a change; `expired` by the database clock. */
    async lockKey(id: string) {
      const [row] = await db
        .select({
          id: apiKeys.id,
          keyHash: apiKeys.keyHash,
          userId: apiKeys.userId,
          email: users.email,
          customerId: apiKeys.customerId,
          merchantId: apiKeys.merchantId,
          status: apiKeys.status,
          expired: sql<boolean>`${isExpired}`,
          replacedBy: apiKeys.replacedBy,
          rollChainId: apiKeys.rollChainId,
          ...lifecycleColumns,
          ...creatorColumns,
        })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(eq(apiKeys.id, id))
        .for('update', { of: apiKeys });
      return row;
    },

    async updateKey(id: string, changes: KeyChanges): Promise<void> {
      await db
        .update(apiKeys)
        .set({ ...changes, updatedAt: sql`now()` })
        .where(eq(apiKeys.id, id));
    },

    /** The old key of a roll: replaced, and expiring after the grace period (never later than it already did). */
    async markRolled(id: string, replacedBy: string, graceSeconds: number): Promise<Date> {
      const [row] = await db
        .update(apiKeys)
        .set({
          replacedBy,
          expiresAt: sql`LEAST(${apiKeys.expiresAt}, now() + make_interval(secs => ${graceSeconds}))`,
          updatedAt: sql`now()`,
        })
        .where(eq(apiKeys.id, id))
        .returning({ expiresAt: apiKeys.expiresAt });
      return row!.expiresAt!;
    },

    /**
     * Locks the ENABLED keys a user created, and those created in turn by any of
     * them, however deep (a key made with a key is still the user's doing); for an
     * integration user, the keys its own keys created.
     */
    async lockEnabledCreatedBy(customerId: string, userId: string) {
      return queryRows<{ id: string; customerId: string; keyHash: string }>(
        db,
        sql`WITH RECURSIVE created(id) AS (
              SELECT k.id FROM api_keys k
              WHERE k.customer_id = ${customerId}
                AND ((k.created_by_type = 'user' AND k.created_by_id = ${userId})
                  OR (k.created_by_type = 'api_key'
                      AND k.created_by_id IN (SELECT o.id FROM api_keys o WHERE o.user_id = ${userId})))
              UNION
              SELECT k.id FROM api_keys k JOIN created c ON k.created_by_type = 'api_key' AND k.created_by_id = c.id
            )
            SELECT a.id, a.customer_id AS "customerId", a.key_hash AS "keyHash" FROM api_keys a
            WHERE a.id IN (SELECT id FROM created) AND a.status = 'ENABLED'
            ORDER BY a.id FOR UPDATE OF a`,
      );
    },

    async markDeleted(id: string): Promise<void> {
      await db.update(apiKeys).set({ status: 'DELETED', updatedAt: sql`now()` }).where(eq(apiKeys.id, id));
    },

    /** Many keys' last use in one statement; a later write never moves a time backwards. */
    async recordLastUse(uses: Array<{ id: string; at: Date }>): Promise<void> {
      if (uses.length === 0) return;
      const ats = `{${uses.map((u) => `"${u.at.toISOString()}"`).join(',')}}`;
      await db.execute(sql`
        UPDATE api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, v.at), v.at)
        FROM unnest(${toUuidArray(uses.map((u) => u.id))}::uuid[], ${ats}::timestamptz[]) AS v(id, at)
        WHERE k.id = v.id`);
    },
  };
}

export type ApiKeysDal = ReturnType<typeof createApiKeysDal>;
