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

/** What the replacement rule compares: the plan's kind of transaction, and its term; and whether it is still assignable. */
export interface PaymentPlanKind {
  id: string;
  cardBrand: string;
  paymentMethod: string;
  isInternational: boolean;
  hasInstallments: boolean;
  term: number;
  status: PlanStatus;
}

export type PlanStatus = 'ACTIVE' | 'RETIRED';
export type PlanOwner = 'PLATFORM' | 'CUSTOMER';

/** A plan of the fee-rule catalogue: its fields, whose it is and whether it is still assignable. */
export type CataloguePlanRow = Omit<PlanRow, 'isSelected'> & { owner: PlanOwner; status: PlanStatus };

export interface CatalogueFilters {
  cardBrand?: string | undefined;
  paymentMethod?: string | undefined;
  status: PlanStatus;
  owner?: PlanOwner | undefined;
}

/** The six fields a customer gives a plan of its own. */
export interface NewPlan {
  paymentMethod: string;
  cardBrand: string;
  term: number;
  /** Decimal text, stored exactly. */
  commission: string;
  hasInstallments: boolean;
  isInternational: boolean;
}

const planColumns = {
  id: paymentPlans.id,
  paymentMethod: paymentPlans.paymentMethod,
  cardBrand: paymentPlans.cardBrand,
  term: paymentPlans.term,
  commission: paymentPlans.commission,
  hasInstallments: paymentPlans.hasInstallments,
  isInternational: paymentPlans.isInternational,
};

const catalogueColumns = {
  ...planColumns,
  owner: sql<PlanOwner>`CASE WHEN ${paymentPlans.customerId} IS NULL THEN 'PLATFORM' ELSE 'CUSTOMER' END`,
  status: sql<PlanStatus>`${paymentPlans.status}`,
};

const kindColumns = {
  id: paymentPlans.id,
  cardBrand: paymentPlans.cardBrand,
  paymentMethod: paymentPlans.paymentMethod,
  isInternational: paymentPlans.isInternational,
  hasInstallments: paymentPlans.hasInstallments,
  term: paymentPlans.term,
  status: sql<PlanStatus>`${paymentPlans.status}`,
};

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
        .select({ ...planColumns, isSelected: selected })
        .from(paymentPlans)
        .where(where)
        .orderBy(desc(paymentPlans.createdAt), desc(paymentPlans.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
    },

    /** The plans among `planIds` that `customerId` may see, retired ones too; ids it may not see are simply absent. */
    async findInCatalogue(customerId: string, planIds: string[]): Promise<PaymentPlanKind[]> {
      return db
        .select(kindColumns)
        .from(paymentPlans)
        .where(and(sql`${paymentPlans.id} = ANY(${toUuidArray(planIds)}::uuid[])`, inCatalogueOf(customerId)));
    },

    /** The plans among `planIds` with their fields, whatever their status (a merchant's projected plans). */
    async findPlans(planIds: string[]): Promise<Array<Omit<PlanRow, 'isSelected'> & { status: PlanStatus }>> {
      if (planIds.length === 0) return [];
      return db
        .select({ ...planColumns, status: kindColumns.status })
        .from(paymentPlans)
        .where(sql`${paymentPlans.id} = ANY(${toUuidArray(planIds)}::uuid[])`);
    },

    /** One page of the fee-rule catalogue (platform plans and the customer's), newest first. */
    async listCatalogue(
      customerId: string,
      filters: CatalogueFilters,
      page: PageRequest,
    ): Promise<{ rows: CataloguePlanRow[]; total: number }> {
      const where = and(
        filters.owner === 'PLATFORM'
          ? isNull(paymentPlans.customerId)
          : filters.owner === 'CUSTOMER'
            ? eq(paymentPlans.customerId, customerId)
            : inCatalogueOf(customerId),
        eq(paymentPlans.status, filters.status),
        filters.cardBrand === undefined ? undefined : eq(paymentPlans.cardBrand, filters.cardBrand),
        filters.paymentMethod === undefined ? undefined : eq(paymentPlans.paymentMethod, filters.paymentMethod),
      );
      const [totalRow] = await db.select({ total: count() }).from(paymentPlans).where(where);
      const rows = await db
        .select(catalogueColumns)
        .from(paymentPlans)
        .where(where)
        .orderBy(desc(paymentPlans.createdAt), desc(paymentPlans.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
    },

    /** The customer's ACTIVE plan with exactly these six fields, if any (a commission compared as a number). */
    async findIdentical(customerId: string, plan: NewPlan): Promise<string | null> {
      const [row] = await db
        .select({ id: paymentPlans.id })
        .from(paymentPlans)
        .where(
          and(
            eq(paymentPlans.customerId, customerId),
            eq(paymentPlans.status, 'ACTIVE'),
            eq(paymentPlans.paymentMethod, plan.paymentMethod),
            eq(paymentPlans.cardBrand, plan.cardBrand),
            eq(paymentPlans.term, plan.term),
            sql`${paymentPlans.commission} = ${plan.commission}::numeric`,
            eq(paymentPlans.hasInstallments, plan.hasInstallments),
            eq(paymentPlans.isInternational, plan.isInternational),
          ),
        )
        .limit(1);
      return row?.id ?? null;
    },

    /** A plan of `customerId`'s own. */
    async create(customerId: string, plan: NewPlan): Promise<CataloguePlanRow> {
      const [row] = await db
        .insert(paymentPlans)
        .values({ customerId, ...plan })
        .returning(catalogueColumns);
      return row!;
    },

    /**
     * Retires the customer's own plan: never a platform plan or another customer's
     * (null: none such). Merchants holding it keep it: only the plan row changes.
     * `retired` is false when it already was.
     */
    /** The customer's own plan `planId`, whatever its status (null: none such). */
    async findOwn(customerId: string, planId: string): Promise<CataloguePlanRow | null> {
      const [row] = await db
        .select(catalogueColumns)
        .from(paymentPlans)
        .where(and(eq(paymentPlans.id, planId), eq(paymentPlans.customerId, customerId)));
      return row ?? null;
    },

    async retire(customerId: string, planId: string): Promise<{ plan: CataloguePlanRow; retired: boolean } | null> {
      const [updated] = await db
        .update(paymentPlans)
        .set({ status: 'RETIRED', retiredAt: sql`statement_timestamp()` })
        .where(
          and(eq(paymentPlans.id, planId), eq(paymentPlans.customerId, customerId), eq(paymentPlans.status, 'ACTIVE')),
        )
        .returning(catalogueColumns);
      if (updated) return { plan: updated, retired: true };
      const [existing] = await db
        .select(catalogueColumns)
        .from(paymentPlans)
        .where(and(eq(paymentPlans.id, planId), eq(paymentPlans.customerId, customerId)));
      return existing ? { plan: existing, retired: false } : null;
    },
  };
}

export type PaymentPlansDal = ReturnType<typeof createPaymentPlansDal>;
