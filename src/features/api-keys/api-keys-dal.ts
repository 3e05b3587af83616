/** Queries of API keys and their integration users. Every function takes an optional transaction. */
import { and, count, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { type Db, type DbOrTx } from '../../db/database.js';
import { apiKeys, users } from '../../db/schema.js';
import type { UserType } from '../auth/principal.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export interface KeyOwner {
  email: string;
  type: UserType;
  customerId: string;
  merchantId: string | null;
}

export interface ApiKeyFilter {
  customerId: string;
  /** null: the customer's CUSTOMER keys; a merchant id: that merchant's keys. */
  merchantId: string | null;
  status: 'ENABLED' | 'DELETED';
  email?: string | undefined;
}

const keyColumns = {
  id: apiKeys.id,
  email: users.email,
  customerId: apiKeys.customerId,
  merchantId: apiKeys.merchantId,
  displayPrefix: apiKeys.displayPrefix,
  last4: apiKeys.last4,
  status: apiKeys.status,
  createdAt: apiKeys.createdAt,
  updatedAt: apiKeys.updatedAt,
  lastUsedAt: apiKeys.lastUsedAt,
};

export interface ApiKeyRow {
  id: string;
  email: string;
  customerId: string;
  merchantId: string | null;
  displayPrefix: string;
  last4: string;
  status: 'ENABLED' | 'DELETED';
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
}

export function createApiKeysDal(db: Db) {
  return {
    /** Creates the integration user if the e-mail is new, then locks its row: the key limit is counted under that lock. */
    async lockOrCreateUser(owner: KeyOwner, tx: DbOrTx) {
      await tx.insert(users).values(owner).onConflictDoNothing({ target: users.email });
      const [row] = await tx
        .select({ id: users.id, type: users.type, customerId: users.customerId, merchantId: users.merchantId })
        .from(users)
        .where(eq(users.email, owner.email))
        .for('update');
      return row!;
    },

    async countEnabledKeys(userId: string, tx: DbOrTx = db): Promise<number> {
      const [row] = await tx
        .select({ n: count() })
        .from(apiKeys)
        .where(and(eq(apiKeys.userId, userId), eq(apiKeys.status, 'ENABLED')));
      return row?.n ?? 0;
    },

    async insertKey(
      key: { userId: string; customerId: string; merchantId: string | null; keyHash: string; displayPrefix: string; last4: string },
      tx: DbOrTx,
    ) {
      const [row] = await tx.insert(apiKeys).values(key).returning({ id: apiKeys.id, status: apiKeys.status, createdAt: apiKeys.createdAt });
      return row!;
    },

    /** The key behind a hash, with its owner: one indexed lookup. */
    async findByHash(keyHash: string, tx: DbOrTx = db) {
      const [row] = await tx
        .select({ id: apiKeys.id, status: apiKeys.status, userId: apiKeys.userId, email: users.email, customerId: apiKeys.customerId, merchantId: apiKeys.merchantId })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(eq(apiKeys.keyHash, keyHash))
        .limit(1);
      return row;
    },

    async list(filter: ApiKeyFilter, page: { limit: number; offset: number }, tx: DbOrTx = db) {
      const conditions: SQL[] = [
        eq(apiKeys.customerId, filter.customerId),
        filter.merchantId === null ? isNull(apiKeys.merchantId) : eq(apiKeys.merchantId, filter.merchantId),
        eq(apiKeys.status, filter.status),
      ];
      if (filter.email !== undefined) conditions.push(eq(users.email, filter.email));
      const where = and(...conditions);
      const [rows, [total]] = await Promise.all([
        tx
          .select(keyColumns)
          .from(apiKeys)
          .innerJoin(users, eq(users.id, apiKeys.userId))
          .where(where)
          .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
          .limit(page.limit)
          .offset(page.offset),
        // The total needs the users table only to filter by e-mail.
        filter.email === undefined
          ? tx.select({ n: count() }).from(apiKeys).where(where)
          : tx.select({ n: count() }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(where),
      ]);
      return { rows: rows satisfies ApiKeyRow[], total: total?.n ?? 0 };
    },

    async lockKey(id: string, tx: DbOrTx) {
      const [row] = await tx
        .select({ id: apiKeys.id, keyHash: apiKeys.keyHash, customerId: apiKeys.customerId, merchantId: apiKeys.merchantId, status: apiKeys.status })
        .from(apiKeys)
        .where(eq(apiKeys.id, id))
        .for('update');
      return row;
    },

    async markDeleted(id: string, tx: DbOrTx): Promise<void> {
      await tx.update(apiKeys).set({ status: 'DELETED', updatedAt: sql`now()` }).where(eq(apiKeys.id, id));
    },

    /** Many keys' last use in one statement; a later write never moves a time backwards. */
    async recordLastUse(uses: Array<{ id: string; at: Date }>, tx: DbOrTx = db): Promise<void> {
      if (uses.length === 0) return;
      const ats = `{${uses.map((u) => `"${u.at.toISOString()}"`).join(',')}}`;
      await tx.execute(sql`
        UPDATE api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, v.at), v.at)
        FROM unnest(${toUuidArray(uses.map((u) => u.id))}::uuid[], ${ats}::timestamptz[]) AS v(id, at)
        WHERE k.id = v.id`);
    },
  };
}

export type ApiKeysDal = ReturnType<typeof createApiKeysDal>;
