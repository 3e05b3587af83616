/** Payment plans, who holds them, their history and the changes scheduled for them. */
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './schema-columns.js';
import { customers } from './schema-accounts.js';

export const paymentPlans = pgTable(
  'payment_plans',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // Null for a platform plan, offered to every customer.
    customerId: uuid('customer_id').references(() => customers.id),
    paymentMethod: text('payment_method').notNull(),
    cardBrand: text('card_brand').notNull(),
    term: integer('term').notNull(),
    // Exact decimal: money-adjacent values are never floats.
    commission: numeric('commission', { precision: 12, scale: 4 }).notNull(),
    hasInstallments: boolean('has_installments').notNull(),
    isInternational: boolean('is_international').notNull(),
    // ACTIVE or RETIRED (migration 0012): a retired plan is no longer assignable, but merchants keep it.
    status: text('status').notNull().default('ACTIVE'),
    retiredAt: timestamp('retired_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    check('payment_plans_status', sql`${t.status} IN ('ACTIVE', 'RETIRED')`),
    check(
      'payment_plans_codes',
      sql`${t.paymentMethod} ~ '^[A-Z0-9_]{1,32}$' AND ${t.cardBrand} ~ '^[A-Z0-9_]{1,32}$'`,
    ),
    check('payment_plans_term_non_negative', sql`${t.term} >= 0`),
    check('payment_plans_commission_non_negative', sql`${t.commission} >= 0`),
    index('payment_plans_customer_idx').on(t.customerId),
  ],
);

/**
 * Which plans each merchant holds. Its references to merchants and payment plans
 * are enforced by statement-level triggers (migration 0002) rather than foreign
 * keys: a foreign key checks each inserted row on its own, which for one
 * assignment to 100,000 merchants is 2.4 million lookups; the triggers check
 * (and KEY SHARE-lock) the distinct parents once per statement, with the same
 * guarantees, including on delete of a merchant or plan still assigned.
 */
export const merchantPaymentPlans = pgTable(
  'merchant_payment_plans',
  {
    merchantId: uuid('merchant_id').notNull(),
    paymentPlanId: uuid('payment_plan_id').notNull(),
    // The statement's time, not the transaction's: see merchantPaymentPlanHistory.
    assignedAt: timestamp('assigned_at', { withTimezone: true, precision: 3 })
      .notNull()
      .default(sql`statement_timestamp()`),
  },
  (t) => [
    // No index by plan: nothing on the request path asks "who holds plan X", and
    // each index costs every assignment row (docs/performance.md).
    primaryKey({ name: 'merchant_payment_plans_pk', columns: [t.merchantId, t.paymentPlanId] }),
  ],
);

/**
 * Fee rules over time (migration 0006): every assignment that ended, as the
 * closed interval [assigned_at, removed_at). merchant_payment_plans stays the
 * present (is_selected and the catalogue read only it); a past instant T is
 * the present rows with assigned_at <= T plus the history rows with
 * assigned_at <= T < removed_at, both by merchant through an index: one query.
 * Only removals write here (a statement-level trigger on merchant_payment_plans,
 * in the transaction of the change, whatever deletes the rows), so assigning
 * costs nothing more; replacing costs one row per plan replaced. Updates of
 * merchant_payment_plans are refused, and a merchant or plan named here cannot
 * be deleted. Times are the statement's, taken after the customer's assignment
 * lock: successive changes never overlap. docs/fee-rules-history.md has the costs.
 */
export const merchantPaymentPlanHistory = pgTable(
  'merchant_payment_plan_history',
  {
    merchantId: uuid('merchant_id').notNull(),
    paymentPlanId: uuid('payment_plan_id').notNull(),
    assignedAt: timestamp('assigned_at', { withTimezone: true, precision: 3 }).notNull(),
    removedAt: timestamp('removed_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    check('merchant_payment_plan_history_interval', sql`${t.removedAt} >= ${t.assignedAt}`),
    // From the most recent end, with every column the query reads: index-only.
    index('merchant_payment_plan_history_at_idx').on(t.merchantId, t.removedAt, t.assignedAt, t.paymentPlanId),
  ],
);

/**
 * Changes of a customer's fee rules scheduled for an instant (migration 0012):
 * PENDING until an instance claims it (FOR UPDATE SKIP LOCKED) and applies it in
 * one transaction, then APPLIED with its `outcome`; or CANCELLED. `actor` and
 * `request_id` are whoever scheduled it: the applied change is attributed to them.
 */
export const scheduledFeeRuleChanges = pgTable(
  'scheduled_fee_rule_changes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    customerId: uuid('customer_id').notNull(),
    kind: text('kind').notNull(),
    // Null for ALL: the customer's merchants of the instant it applies.
    merchantIds: uuid('merchant_ids').array(),
    paymentPlanIds: uuid('payment_plan_ids').array().notNull(),
    effectiveAt: timestamp('effective_at', { withTimezone: true, precision: 3 }).notNull(),
    status: text('status').notNull().default('PENDING'),
    actor: jsonb('actor').notNull(),
    requestId: text('request_id'),
    outcome: jsonb('outcome'),
    appliedAt: timestamp('applied_at', { withTimezone: true, precision: 3 }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    // Named as migration 0012 made it (PostgreSQL's default name), not as drizzle would.
    foreignKey({
      name: 'scheduled_fee_rule_changes_customer_id_fkey',
      columns: [t.customerId],
      foreignColumns: [customers.id],
    }),
    check(
      'scheduled_fee_rule_changes_kind',
      sql`${t.kind} IN ('BULK', 'ALL') AND (${t.kind} = 'ALL') = (${t.merchantIds} IS NULL)`,
    ),
    check('scheduled_fee_rule_changes_status', sql`${t.status} IN ('PENDING', 'APPLIED', 'CANCELLED')`),
    index('scheduled_fee_rule_changes_due_idx').on(t.effectiveAt, t.id).where(sql`${t.status} = 'PENDING'`),
    index('scheduled_fee_rule_changes_customer_idx').on(
      t.customerId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);
