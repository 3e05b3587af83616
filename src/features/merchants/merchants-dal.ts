/** Queries of merchants: the caller's listing, one merchant, its changes, and ownership checks. */
import { and, count, eq, getTableColumns, ilike, or, type SQL } from 'drizzle-orm';
import { type Db, isoUtc, precompiled, queryRows, sql, sqlState } from '../../db/database.js';
import { apiKeys, merchants } from '../../db/schema.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export type MerchantRow = typeof merchants.$inferSelect;
/** A merchant as the listing reads it: its instants already printed (ISO 8601, UTC, milliseconds). */
export type MerchantListRow = Omit<MerchantRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };
/** What a create writes: everything but what the database sets. */
export type NewMerchantRow = Omit<typeof merchants.$inferInsert, 'id' | 'createdAt' | 'updatedAt' | 'status'>;
/** What a PATCH may change. */
export type MerchantChanges = Partial<Omit<NewMerchantRow, 'customerId' | 'country'> & Pick<MerchantRow, 'status'>>;

/** Which merchants a caller may see: all of its customer's, or the one it is. */
export interface MerchantScope {
  customerId: string;
  merchantId: string | null;
}

function scopeFilter(scope: MerchantScope): SQL | undefined {
  return and(
    eq(merchants.customerId, scope.customerId),
    scope.merchantId === null ? undefined : eq(merchants.id, scope.merchantId),
  );
}

/** LIKE's wildcards and escape character taken literally. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Name contains `search` in any letter case, or the id starts with it. */
function searchFilter(search: string | undefined): SQL | undefined {
  if (search === undefined) return undefined;
  const literal = likeLiteral(search);
  return or(ilike(merchants.name, `%${literal}%`), sql`${merchants.id}::text LIKE ${`${literal.toLowerCase()}%`}`);
}

/** The listing's filters: a text search and a status. */
export interface ListFilters {
  search?: string | undefined;
  status?: MerchantRow['status'] | undefined;
}

function listWhere(scope: MerchantScope, filters: ListFilters): SQL | undefined {
  return and(
    scopeFilter(scope),
    searchFilter(filters.search),
    filters.status === undefined ? undefined : eq(merchants.status, filters.status),
  );
}

/** unique_violation: only merchants_customer_code_unique can raise it on an update of merchants. */
const UNIQUE_VIOLATION = '23505';

/**
 * Every column of merchants under its MerchantRow name, the instants printed by
 * PostgreSQL: a batch is hundreds of rows of 22 columns, and reading them raw
 * spares drizzle's per-cell mapping and two Dates parsed and printed again per row.
 */
const LIST_COLUMNS = precompiled(
  sql.join(
    Object.entries(getTableColumns(merchants)).map(([key, column]) =>
      key === 'createdAt' || key === 'updatedAt'
        ? sql`${isoUtc(column)} AS ${sql.identifier(key)}`
        : sql`${column} AS ${sql.identifier(key)}`,
    ),
    sql`, `,
  ),
);

export function createMerchantsDal(db: Db) {
  return {
    /** The hashes of a merchant's ENABLED keys: what every instance must forget when the merchant's status changes. */
    async enabledKeyHashes(merchantId: string): Promise<string[]> {
      const rows = await db
        .select({ keyHash: apiKeys.keyHash })
        .from(apiKeys)
        .where(and(eq(apiKeys.merchantId, merchantId), eq(apiKeys.status, 'ENABLED')));
      return rows.map((r) => r.keyHash);
    },

    /** How many merchants the scope sees that match the listing's filters. */
    async count(scope: MerchantScope, filters: ListFilters): Promise<number> {
      const [row] = await db.select({ total: count() }).from(merchants).where(listWhere(scope, filters));
      return row?.total ?? 0;
    },

    /**
     * One page, newest first, in batches of at most `batchSize` rows, each read
     * when the one before has been taken: one query per batch on a pooled
     * connection given back at once, so a reader that stops early holds nothing.
     * The first batch skips the pages before; the next ones continue after the
     * last row read (created_at, id), which rows added meanwhile, all newer,
     * cannot shift. A batch is the reader's once yielded, to empty as it takes
     * its rows: this generator keeps only the last row, whose key the next batch starts after.
     */
    async *pageInBatches(
      scope: MerchantScope,
      page: PageRequest & ListFilters,
      batchSize: number,
    ): AsyncGenerator<MerchantListRow[]> {
      const where = listWhere(scope, page) ?? sql`true`;
      let remaining = page.size;
      let after: MerchantListRow | undefined;
      while (remaining > 0) {
        const limit = Math.min(batchSize, remaining);
        const rows = await queryRows<MerchantListRow>(
          db,
          after === undefined
            ? sql`SELECT ${LIST_COLUMNS} FROM ${merchants} WHERE ${where}
                  ORDER BY ${merchants.createdAt} DESC, ${merchants.id} DESC LIMIT ${limit} OFFSET ${offsetOf(page)}`
            : sql`SELECT ${LIST_COLUMNS} FROM ${merchants}
                  WHERE ${where} AND (${merchants.createdAt}, ${merchants.id}) < (${after.createdAt}::timestamptz, ${after.id}::uuid)
                  ORDER BY ${merchants.createdAt} DESC, ${merchants.id} DESC LIMIT ${limit}`,
        );
        const read = rows.length;
        after = rows.at(-1);
        if (read > 0) yield rows;
        if (read < limit) return;
        remaining -= read;
      }
    },

    /** One merchant the scope may see. */
    async find(scope: MerchantScope, id: string): Promise<MerchantRow | undefined> {
      const [row] = await db
        .select()
        .from(merchants)
        .where(and(scopeFilter(scope), eq(merchants.id, id)));
      return row;
    },

    /**
     * One merchant the scope may see, locked for a change. NO KEY UPDATE: keys and
     * users of the merchant may still be created meanwhile (their foreign keys).
     */
    async lock(scope: MerchantScope, id: string): Promise<MerchantRow | undefined> {
      const [row] = await db
        .select()
        .from(merchants)
        .where(and(scopeFilter(scope), eq(merchants.id, id)))
        .for('no key update');
      return row;
    },

    /**
     * A new merchant, or undefined when another of its customer already has its
     * merchant_code. ON CONFLICT waits for a concurrent insert of the same code
     * and then does nothing, so of concurrent creates exactly one succeeds.
     */
    async insert(row: NewMerchantRow): Promise<MerchantRow | undefined> {
      const [created] = await db
        .insert(merchants)
        .values(row)
        .onConflictDoNothing({
          target: [merchants.customerId, merchants.merchantCode],
          where: sql`${merchants.merchantCode} IS NOT NULL`,
        })
        .returning();
      return created;
    },

    /** The merchant changed, or undefined when the new merchant_code is another merchant's of its customer. */
    async update(id: string, changes: MerchantChanges): Promise<MerchantRow | undefined> {
      try {
        const [row] = await db
          .update(merchants)
          .set({ ...changes, updatedAt: sql`now()` })
          .where(eq(merchants.id, id))
          .returning();
        return row;
      } catch (err) {
        if (sqlState(err) === UNIQUE_VIOLATION) return undefined;
        throw err;
      }
    },

    async belongsToCustomer(customerId: string, merchantId: string): Promise<boolean> {
      const [row] = await db
        .select({ id: merchants.id })
        .from(merchants)
        .where(and(eq(merchants.id, merchantId), eq(merchants.customerId, customerId)))
        .limit(1);
      return row !== undefined;
    },

    /** The ids among `merchantIds` that are not merchants of `customerId`, in the order given. */
    async notOfCustomer(customerId: string, merchantIds: string[]): Promise<string[]> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`
        SELECT sent.id FROM unnest(${toUuidArray(merchantIds)}::uuid[]) WITH ORDINALITY AS sent(id, position)
        WHERE NOT EXISTS (SELECT 1 FROM merchants m WHERE m.id = sent.id AND m.customer_id = ${customerId})
        ORDER BY sent.position
      `,
      );
      return rows.map((r) => r.id);
    },

    /** The status of each of `merchantIds` that is a merchant of `customerId`; the others are absent (one query for a quote). */
    async statusesOf(customerId: string, merchantIds: string[]): Promise<Array<Pick<MerchantRow, 'id' | 'status'>>> {
      return queryRows<Pick<MerchantRow, 'id' | 'status'>>(
        db,
        sql`
        SELECT m.id, m.status FROM merchants m
        WHERE m.customer_id = ${customerId} AND m.id = ANY(${toUuidArray(merchantIds)}::uuid[])
      `,
      );
    },

    /** The INACTIVE merchants among `merchantIds`, in the order given. */
    async inactiveAmong(merchantIds: string[]): Promise<string[]> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`
        SELECT sent.id FROM unnest(${toUuidArray(merchantIds)}::uuid[]) WITH ORDINALITY AS sent(id, position)
        JOIN merchants m ON m.id = sent.id AND m.status = 'INACTIVE'
        ORDER BY sent.position
      `,
      );
      return rows.map((r) => r.id);
    },
  };
}

export type MerchantsDal = ReturnType<typeof createMerchantsDal>;
