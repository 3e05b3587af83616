/** Queries of the plan catalogue a customer sees: platform plans plus its own. */
import { and, count, desc, eq, isNull, not, or, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { paymentPlans } from '../../db/schema.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export interface PlanFilters {
  cardBrand?: string | undefined;
  paymentMethod?: string | undefined;
  /** The merchant whose assignments decide is_selected; null: never selected. */
  selectedFor: string | null;
  /** Only plans that are (true) or are not (false) assigned to `selectedFor`. */
  isSelected?: boolean | undefined;
}

export interface PlanRow {
  id: string;
  paymentMethod: string;
  cardBrand: string;
  term: number;
  /** NUMERIC as text: exact until it leaves the service. */
  commission: string;
  hasInstallments: boolean;
  isInternational: boolean;
  isSelected: boolean;
}

/** What the replacement rule compares: the plan's kind of transaction, and its term. */
export interface PaymentPlanKind {
  id: string;
  cardBrand: string;
  paymentMethod: string;
  isInternational: boolean;
  hasInstallments: boolean;
  term: number;
}

function inCatalogueOf(customerId: string): SQL | undefined {
  return or(isNull(paymentPlans.customerId), eq(paymentPlans.customerId, customerId));
}

function assignedTo(merchantId: string): SQL<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM merchant_payment_plans mpp WHERE mpp.merchant_id = ${merchantId} AND mpp.payment_plan_id = ${paymentPlans.id})`;
}

export function createPaymentPlansDal(db: Db) {
  return {
    /** One page of the catalogue, newest first, with the total of all that match. */
    async list(
      customerId: string,
      filters: PlanFilters,
      page: PageRequest,
    ): Promise<{ rows: PlanRow[]; total: number }> {
      const selected = filters.selectedFor === null ? sql<boolean>`false` : assignedTo(filters.selectedFor);
      const where = and(
        inCatalogueOf(customerId),
        filters.cardBrand === undefined ? undefined : eq(paymentPlans.cardBrand, filters.cardBrand),
        filters.paymentMethod === undefined ? undefined : eq(paymentPlans.paymentMethod, filters.paymentMethod),
        filters.isSelected === undefined ? undefined : filters.isSelected ? selected : not(selected),
      );
      const [totalRow] = await db.select({ total: count() }).from(paymentPlans).where(where);
      const rows = await db
        .select({
          id: paymentPlans.id,
          paymentMethod: paymentPlans.paymentMethod,
          cardBrand: paymentPlans.cardBrand,
          term: paymentPlans.term,
          commission: paymentPlans.commission,
          hasInstallments: paymentPlans.hasInstallments,
          isInternational: paymentPlans.isInternational,
          isSelected: selected,
        })
        .from(paymentPlans)
        .where(where)
        .orderBy(desc(paymentPlans.createdAt), desc(paymentPlans.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
    },

    /** The plans among `planIds` that `customerId` may assign; ids it may not see are simply absent. */
    async findInCatalogue(customerId: string, planIds: string[]): Promise<PaymentPlanKind[]> {
      return db
        .select({
          id: paymentPlans.id,
          cardBrand: paymentPlans.cardBrand,
          paymentMethod: paymentPlans.paymentMethod,
          isInternational: paymentPlans.isInternational,
          hasInstallments: paymentPlans.hasInstallments,
          term: paymentPlans.term,
        })
        .from(paymentPlans)
        .where(and(sql`${paymentPlans.id} = ANY(${toUuidArray(planIds)}::uuid[])`, inCatalogueOf(customerId)));
    },
  };
}

export type PaymentPlansDal = ReturnType<typeof createPaymentPlansDal>;
