/** Fee changes held for a second person's approval (contract section 23, migration 0023). */
import { sql } from 'drizzle-orm';
import { check, foreignKey, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './schema-columns.js';
import { customers } from './schema-accounts.js';

/**
 * A fee change of a customer whose policy requires approval: the request as it
 * was sent and its dry run then, PENDING until another ADMIN approves it (then
 * APPLIED in the approval's transaction, or FAILED with the reason), rejects
 * it, its requester cancels it, or it expires.
 */
export const changeRequests = pgTable(
  'change_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    customerId: uuid('customer_id').notNull(),
    status: text('status').notNull().default('PENDING'),
    operation: text('operation').notNull(),
    // The merchant, plan or scheduled change the request's path names, if any.
    subjectId: text('subject_id'),
    request: jsonb('request').notNull(),
    preview: jsonb('preview').notNull(),
    requestedBy: jsonb('requested_by').notNull(),
    reviewedBy: jsonb('reviewed_by'),
    reason: text('reason'),
    result: jsonb('result'),
    requestId: text('request_id'),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true, precision: 3 }),
    appliedAt: timestamp('applied_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: 'change_requests_customer_id_customers_id_fk',
      columns: [t.customerId],
      foreignColumns: [customers.id],
    }),
    check(
      'change_requests_status',
      sql`${t.status} IN ('PENDING', 'APPLIED', 'REJECTED', 'CANCELLED', 'EXPIRED', 'FAILED')`,
    ),
    index('change_requests_customer_idx').on(t.customerId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('change_requests_expiry_idx').on(t.expiresAt, t.id).where(sql`${t.status} = 'PENDING'`),
  ],
);
