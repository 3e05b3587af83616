/**
 * Queries of scheduled fee-rule changes (migration 0012). Instances share the
 * due work through the table: a change is claimed with FOR UPDATE SKIP LOCKED
 * in the transaction that applies it, so it is applied once, by one instance,
 * and a transaction that dies (a killed process, a cut connection) leaves it
 * PENDING for the next claim.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { newestFirstPage } from '../../db/newest-first-page.js';
import { scheduledFeeRuleChanges } from '../../db/schema.js';
import type { Actor } from '../../lib/change-context.js';
import type { PageRequest } from '../../lib/pagination.js';

export type ScheduledStatus = 'PENDING' | 'APPLIED' | 'CANCELLED';

/** What applying a change did, and what it skipped because it was no longer assignable. */
export interface ScheduleOutcome {
  merchants: number;
  merchants_changed: number;
  assignments_added: number;
  assignments_removed: number;
  skipped_payment_plan_ids: string[];
  skipped_merchant_ids: string[];
}

export interface ScheduledChangeRow {
  id: string;
  customerId: string;
  kind: 'BULK' | 'ALL';
  merchantIds: string[] | null;
  paymentPlanIds: string[];
  effectiveAt: Date;
  status: ScheduledStatus;
  actor: Actor;
  requestId: string | null;
  outcome: ScheduleOutcome | null;
  appliedAt: Date | null;
  cancelledAt: Date | null;
  createdAt: Date;
}

/** A due change, and who scheduled it: the change is applied in their name. */
export interface DueCandidate {
  id: string;
  customerId: string;
  actor: Actor;
  requestId: string | null;
}

export interface NewScheduledChange {
  customerId: string;
  merchantIds: string[] | null;
  paymentPlanIds: string[];
  effectiveAt: Date;
  actor: Actor;
  requestId: string | null;
}

const t = scheduledFeeRuleChanges;

const columns = {
  id: t.id,
  customerId: t.customerId,
  kind: sql<'BULK' | 'ALL'>`${t.kind}`,
  merchantIds: t.merchantIds,
  paymentPlanIds: t.paymentPlanIds,
  effectiveAt: t.effectiveAt,
  status: sql<ScheduledStatus>`${t.status}`,
  actor: sql<Actor>`${t.actor}`,
  requestId: t.requestId,
  outcome: sql<ScheduleOutcome | null>`${t.outcome}`,
  appliedAt: t.appliedAt,
  cancelledAt: t.cancelledAt,
  createdAt: t.createdAt,
};

/**
 * Due: PENDING, its instant reached, and no earlier pending change of the same
 * customer (a customer's changes apply one after another, in order of instant;
 * one being applied elsewhere is still PENDING to this statement, so the next
 * waits for it).
 */
const due = sql`${t.status} = 'PENDING' AND ${t.effectiveAt} <= statement_timestamp() AND NOT EXISTS (
  SELECT 1 FROM scheduled_fee_rule_changes e
  WHERE e.customer_id = ${t.customerId} AND e.status = 'PENDING' AND (e.effective_at, e.id) < (${t.effectiveAt}, ${t.id}))`;

export function createScheduledChangesDal(db: Db) {
  return {
    async insert(change: NewScheduledChange): Promise<ScheduledChangeRow> {
      const [row] = await db
        .insert(t)
        .values({ ...change, kind: change.merchantIds === null ? 'ALL' : 'BULK' })
        .returning(columns);
      return row!;
    },

    list(
      customerId: string,
      status: ScheduledStatus | undefined,
      page: PageRequest,
    ): Promise<{ rows: ScheduledChangeRow[]; total: number }> {
      return newestFirstPage<ScheduledChangeRow>(db, t, columns, customerId, status, page);
    },

    /** The customer's change `id`, with its row locked until the transaction ends (null: none such). */
    async lockOfCustomer(customerId: string, id: string): Promise<ScheduledChangeRow | null> {
      const [row] = await db
        .select(columns)
        .from(t)
        .where(and(eq(t.id, id), eq(t.customerId, customerId)))
        .for('update');
      return row ?? null;
    },

    async markCancelled(id: string): Promise<ScheduledChangeRow> {
      const [row] = await db
        .update(t)
        .set({ status: 'CANCELLED', cancelledAt: sql`statement_timestamp()` })
        .where(eq(t.id, id))
        .returning(columns);
      return row!;
    },

    async markApplied(id: string, outcome: ScheduleOutcome): Promise<ScheduledChangeRow> {
      const [row] = await db
        .update(t)
        .set({ status: 'APPLIED', appliedAt: sql`statement_timestamp()`, outcome })
        .where(eq(t.id, id))
        .returning(columns);
      return row!;
    },

    /**
     * Due changes an instance may try to claim, oldest instant first: only the
     * earliest pending one of each customer, since a customer's changes apply in
     * the order of their instants. A read without locks: the claim decides.
     */
    async dueCandidates(limit: number): Promise<DueCandidate[]> {
      return db
        .select({ id: t.id, customerId: t.customerId, actor: columns.actor, requestId: t.requestId })
        .from(t)
        .where(due)
        .orderBy(t.effectiveAt, t.id)
        .limit(limit);
    },

    /**
     * Claims change `id` for this transaction if it is still PENDING, due, the
     * earliest pending change of its customer, and not being applied by another
     * transaction (SKIP LOCKED: then null at once, never a wait).
     */
    async claim(id: string): Promise<ScheduledChangeRow | null> {
      const [row] = await db
        .select(columns)
        .from(t)
        .where(and(eq(t.id, id), due))
        .for('update', { skipLocked: true });
      return row ?? null;
    },

    /**
     * The customer's pending changes up to `until` that reach `merchantId` (named,
     * or ALL), in the order they apply; none while the merchant is INACTIVE, since
     * a change applies to the ACTIVE merchants of its instant only.
     */
    async pendingFor(customerId: string, merchantId: string, until: Date): Promise<ScheduledChangeRow[]> {
      return db
        .select(columns)
        .from(t)
        .where(
          and(
            eq(t.customerId, customerId),
            eq(t.status, 'PENDING'),
            sql`${t.effectiveAt} <= ${until.toISOString()}::timestamptz`,
            sql`(${t.merchantIds} IS NULL OR ${merchantId}::uuid = ANY(${t.merchantIds}))`,
            sql`EXISTS (SELECT 1 FROM merchants m WHERE m.id = ${merchantId}::uuid AND m.status = 'ACTIVE')`,
          ),
        )
        .orderBy(t.effectiveAt, t.id);
    },
  };
}

export type ScheduledChangesDal = ReturnType<typeof createScheduledChangesDal>;
