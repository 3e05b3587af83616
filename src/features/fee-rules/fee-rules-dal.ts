/**
 * Queries of plan assignments. The replacement rule is one set-based statement:
 * its cost grows with the rows it changes, never with round trips.
 */
import { sql } from 'drizzle-orm';
import { type Db, type DbOrTx, queryRows } from '../../db/database.js';

export interface ReplacementResult {
  removed: number;
  added: number;
}

export function createFeeRulesDal(db: Db) {
  return {
    /**
     * For each merchant: drop current plans that share (card_brand, payment_method,
     * is_international, has_installments) with a sent plan, then add the sent plans.
     * Plans sent again are kept as they are rather than deleted and re-added.
     * `merchantIds === 'all'` targets every merchant of `customerId`.
     */
    async replacePlans(
      target: { customerId: string; merchantIds: string[] | 'all' },
      planIds: string[],
      tx: DbOrTx = db,
    ): Promise<ReplacementResult> {
      const merchants =
        target.merchantIds === 'all'
          ? sql`SELECT id FROM merchants WHERE customer_id = ${target.customerId}`
          : sql`SELECT unnest(${toUuidArray(target.merchantIds)}::uuid[]) AS id`;
      const [row] = await queryRows<{ removed: string; added: string }>(tx, sql`
        WITH sent AS (
          SELECT id, card_brand, payment_method, is_international, has_installments
          FROM payment_plans WHERE id = ANY(${toUuidArray(planIds)}::uuid[])
        ),
        targets AS (${merchants}),
        removed AS (
          DELETE FROM merchant_payment_plans mpp
          USING payment_plans cur
          WHERE cur.id = mpp.payment_plan_id
            AND mpp.merchant_id IN (SELECT id FROM targets)
            AND mpp.payment_plan_id NOT IN (SELECT id FROM sent)
            AND (cur.card_brand, cur.payment_method, cur.is_international, cur.has_installments) IN (
              SELECT card_brand, payment_method, is_international, has_installments FROM sent)
          RETURNING 1
        ),
        added AS (
          INSERT INTO merchant_payment_plans (merchant_id, payment_plan_id)
          SELECT t.id, s.id FROM targets t CROSS JOIN sent s
          ON CONFLICT DO NOTHING
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM removed) AS removed, (SELECT count(*) FROM added) AS added
      `);
      return { removed: Number(row?.removed ?? 0), added: Number(row?.added ?? 0) };
    },
  };
}

/** A text[] literal: one parameter however many ids, and the same on both drivers. */
export function toUuidArray(ids: string[]): string {
  return `{${ids.join(',')}}`;
}

export type FeeRulesDal = ReturnType<typeof createFeeRulesDal>;
