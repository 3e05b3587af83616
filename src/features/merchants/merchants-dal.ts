/** Queries of merchants: the caller's listing and ownership checks. */
import { and, count, desc, eq, ilike, or, type SQL } from 'drizzle-orm';
import { type Db, queryRows, sql } from '../../db/database.js';
import { merchants } from '../../db/schema.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export interface MerchantRow {
  id: string;
  customerId: string;
  name: string;
  createdAt: Date;
}

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

export function createMerchantsDal(db: Db) {
  return {
    /** One page, newest first, with the total of all that match. */
    async list(
      scope: MerchantScope,
      page: PageRequest & { search?: string },
    ): Promise<{ rows: MerchantRow[]; total: number }> {
      const where = and(scopeFilter(scope), searchFilter(page.search));
      const [totalRow] = await db.select({ total: count() }).from(merchants).where(where);
      const rows = await db
        .select({
          id: merchants.id,
          customerId: merchants.customerId,
          name: merchants.name,
          createdAt: merchants.createdAt,
        })
        .from(merchants)
        .where(where)
        .orderBy(desc(merchants.createdAt), desc(merchants.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
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
  };
}

export type MerchantsDal = ReturnType<typeof createMerchantsDal>;
