/**
 * Queries of plan assignments. The replacement rule is one set-based statement:
 * its cost grows with the rows it changes, never with round trips.
 */
import { type SQL, sql } from 'drizzle-orm';
import { type Db, type DbOrTx, queryRows } from '../../db/database.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export interface ReplacementResult {
  removed: number;
  added: number;
}

/** Locks in id order, so two transactions locking several customers cannot deadlock. */
async function lockCustomers(customerIds: string[], tx: DbOrTx): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`SELECT id FROM customers WHERE id = ANY(${toUuidArray(customerIds)}::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
  );
  return rows.length;
}

export function createFeeRulesDal(db: Db) {
  return {
    /**
     * Serialises assignments of one customer until the transaction ends.
     * Every assignment touches merchants of exactly one customer, so one lock per
     * customer makes concurrent assignments run one after another, and since each
     * transaction takes only this one lock before writing, they cannot deadlock.
     * NO KEY UPDATE, not UPDATE: it does not block the foreign-key checks of
     * rows being inserted for this customer (new merchants, users, API keys).
     */
    async lockCustomerAssignments(customerId: string, tx: DbOrTx): Promise<boolean> {
      return (await lockCustomers([customerId], tx)) === 1;
    },

    /** The same for several customers (the import). */
    lockCustomersAssignments: lockCustomers,

    /**
     * For each merchant: drop current plans that share (card_brand, payment_method,
     * is_international, has_installments) with a sent plan, then add the sent plans.
     * Plans sent again are kept as they are rather than deleted and re-added.
     * `merchantIds === 'all'` targets every merchant of `customerId`.
     * Run it after lockCustomerAssignments in the same transaction.
     */
    async replacePlans(
      target: { customerId: string; merchantIds: string[] | 'all' },
      planIds: string[],
      tx: DbOrTx = db,
    ): Promise<ReplacementResult> {
      const sentIds = toUuidArray(planIds);
      const merchants: SQL =
        target.merchantIds === 'all'
          ? sql`SELECT id FROM merchants WHERE customer_id = ${target.customerId}`
          : sql`SELECT DISTINCT unnest(${toUuidArray(target.merchantIds)}::uuid[]) AS id`;
      // `replaced` is a handful of plan ids (same kinds as the sent plans), so the
      // delete probes the (merchant_id, payment_plan_id) key instead of joining
      // every current assignment of every target against the catalogue.
      // The insert skips what merchants already hold with an anti-join rather than
      // ON CONFLICT (speculative insertion nearly doubled its cost at 1.2M rows);
      // callers serialise assignments per customer (lockCustomerAssignments), so
      // nobody else inserts the same rows meanwhile. Rows go in key order, so the
      // primary key index is written page by page instead of at random.
      const [row] = await queryRows<{ removed: string; added: string }>(tx, sql`
        WITH sent AS (
          SELECT id, card_brand, payment_method, is_international, has_installments
          FROM payment_plans WHERE id = ANY(${sentIds}::uuid[])
        ),
        replaced AS (
          SELECT p.id FROM payment_plans p
          WHERE (p.card_brand, p.payment_method, p.is_international, p.has_installments) IN (
              SELECT card_brand, payment_method, is_international, has_installments FROM sent)
            AND p.id <> ALL(${sentIds}::uuid[])
        ),
        targets AS MATERIALIZED (${merchants}),
        removed AS (
          DELETE FROM merchant_payment_plans mpp
          WHERE mpp.merchant_id IN (SELECT id FROM targets)
            AND mpp.payment_plan_id IN (SELECT id FROM replaced)
          RETURNING 1
        ),
        added AS (
          INSERT INTO merchant_payment_plans (merchant_id, payment_plan_id)
          SELECT t.id, s.id FROM targets t CROSS JOIN sent s
          WHERE NOT EXISTS (
            SELECT 1 FROM merchant_payment_plans cur WHERE cur.merchant_id = t.id AND cur.payment_plan_id = s.id)
          ORDER BY t.id, s.id
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM removed) AS removed, (SELECT count(*) FROM added) AS added
      `);
      return { removed: Number(row?.removed ?? 0), added: Number(row?.added ?? 0) };
    },
  };
}

export type FeeRulesDal = ReturnType<typeof createFeeRulesDal>;
