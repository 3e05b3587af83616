/**
 * Queries of a merchant's plans over time: the present assignments and the
 * ended ones the database keeps (merchant_payment_plan_history, migration 0006).
 * Part of the fee rules' DAL (fee-rules-dal.ts).
 */
import { sql } from 'drizzle-orm';
import { type Db, isoUtc, queryRows } from '../../db/database.js';
import type { PlanRow } from './payment-plans-dal.js';

/** A plan a merchant held at some instant, and since when (ISO 8601 UTC with milliseconds). */
export type HeldPlanRow = Omit<PlanRow, 'isSelected'> & { assignedAt: string };

/** A plan a merchant holds or held, over [assignedAt, removedAt) (removedAt null: still held), times as the API prints them. */
export type TimelineRow = HeldPlanRow & { removedAt: string | null };

export function createFeeRuleHistoryQueries(db: Db) {
  return {
    /**
     * Every plan `merchantId` holds or held, in the order of plansAt: the present
     * assignments and the ended ones, each a range of one index by merchant.
     */
    async timeline(merchantId: string): Promise<TimelineRow[]> {
      return queryRows<TimelineRow>(
        db,
        sql`
        SELECT p.id, p.payment_method AS "paymentMethod", p.card_brand AS "cardBrand", p.term, p.commission::text AS commission,
               p.has_installments AS "hasInstallments", p.is_international AS "isInternational",
               ${isoUtc(sql`held.assigned_at`)} AS "assignedAt",
               CASE WHEN held.removed_at IS NULL THEN NULL ELSE ${isoUtc(sql`held.removed_at`)} END AS "removedAt"
        FROM (
          SELECT payment_plan_id, assigned_at, NULL::timestamptz AS removed_at FROM merchant_payment_plans
          WHERE merchant_id = ${merchantId}
          UNION ALL
          SELECT payment_plan_id, assigned_at, removed_at FROM merchant_payment_plan_history
          WHERE merchant_id = ${merchantId}
        ) held
        JOIN payment_plans p ON p.id = held.payment_plan_id
        ORDER BY p.card_brand, p.payment_method, p.is_international, p.has_installments, p.term, p.id, held.assigned_at
      `,
      );
    },

    /**
     * The plans `merchantId` held at `at`: the present assignments made by then,
     * and the ended ones whose interval [assigned_at, removed_at) contains it.
     * Each side is a range of one index by merchant; ordered as docs/fee-rules-history.md says.
     */
    async plansAt(merchantId: string, at: Date): Promise<HeldPlanRow[]> {
      const instant = sql`${at.toISOString()}::timestamptz`;
      return queryRows<HeldPlanRow>(
        db,
        sql`
        SELECT p.id, p.payment_method AS "paymentMethod", p.card_brand AS "cardBrand", p.term, p.commission::text AS commission,
               p.has_installments AS "hasInstallments", p.is_international AS "isInternational",
               ${isoUtc(sql`held.assigned_at`)} AS "assignedAt"
        FROM (
          SELECT payment_plan_id, assigned_at FROM merchant_payment_plans
          WHERE merchant_id = ${merchantId} AND assigned_at <= ${instant}
          UNION ALL
          SELECT payment_plan_id, assigned_at FROM merchant_payment_plan_history
          WHERE merchant_id = ${merchantId} AND removed_at > ${instant} AND assigned_at <= ${instant}
        ) held
        JOIN payment_plans p ON p.id = held.payment_plan_id
        ORDER BY p.card_brand, p.payment_method, p.is_international, p.has_installments, p.term, p.id
      `,
      );
    },
  };
}
