/** What the service records and sends: the audit trail, domain events, webhooks, the mail outbox, answers kept for retries. */
import { sql } from 'drizzle-orm';
import {
  bigserial,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  smallint,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './schema-columns.js';
import { customers } from './schema-accounts.js';

/**
 * Mail waiting to be sent (src/features/mail/mail-dal.ts): written in the
 * transaction that asks for it, sent by a background worker, deleted once sent
 * (it may hold a temporary password or a code), retried with a growing pause.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    body: text('body').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    createdAt: createdAt(),
  },
  (t) => [index('mail_outbox_due_idx').on(t.nextAttemptAt)],
);

/** Every change, written in the same transaction as the change itself. */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    requestId: text('request_id'),
    // 'user' (token), 'api_key' or 'operator' (command line).
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id'),
    customerId: uuid('customer_id'),
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id'),
    details: jsonb('details').notNull().default({}),
  },
  (t) => [
    // GET /v1/audit-events: a customer's events newest first, all or of one action.
    index('audit_events_customer_listing_idx').on(
      t.customerId,
      t.occurredAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('audit_events_customer_action_idx').on(
      t.customerId,
      t.action,
      t.occurredAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

/**
 * The outbox of domain events (src/features/events/events-dal.ts): written by the
 * transaction of the change each reports; webhook delivery reads it.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    type: text('type').notNull(),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id),
    requestId: text('request_id'),
    data: jsonb('data').notNull(),
    createdAt: createdAt(),
    // Set once the event's webhook deliveries are written (src/features/webhooks/webhooks-dal.ts).
    fannedOutAt: timestamp('fanned_out_at', { withTimezone: true, precision: 3 }),
    // The W3C traceparent of the change that wrote it: its webhook deliveries' spans link to it (migration 0025).
    traceparent: text('traceparent'),
  },
  (t) => [
    index('domain_events_customer_idx').on(t.customerId, t.createdAt),
    index('domain_events_pending_fan_out_idx').on(t.createdAt).where(sql`${t.fannedOutAt} IS NULL`),
  ],
);

/**
 * A customer's webhook subscriptions (docs/webhooks.md). The secret signs
 * deliveries and is never answered; after a PATCH of it the previous one signs
 * beside it until previous_secret_expires_at.
 */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    customerId: uuid('customer_id').notNull(),
    notificationUrl: text('notification_url').notNull(),
    notificationTypes: text('notification_types').array().notNull(),
    status: text('status', { enum: ['ENABLED', 'DISABLED'] })
      .notNull()
      .default('ENABLED'),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
    // When its deliveries started failing without a success since; null while they succeed.
    failingSince: timestamp('failing_since', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // The foreign keys of the webhook tables are named as migration 0013 made them (PostgreSQL's default names).
    foreignKey({
      name: 'webhook_subscriptions_customer_id_fkey',
      columns: [t.customerId],
      foreignColumns: [customers.id],
    }),
    check('webhook_subscriptions_status_check', sql`${t.status} IN ('ENABLED', 'DISABLED')`),
    index('webhook_subscriptions_customer_listing_idx').on(
      t.customerId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

/**
 * One event to one subscription: the durable queue of delivery attempts,
 * claimed with FOR UPDATE SKIP LOCKED. `claimed_until` is the lease of the
 * instance attempting it; an instance that dies leaves it to be claimed again.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    subscriptionId: uuid('subscription_id').notNull(),
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status', { enum: ['PENDING', 'SUCCEEDED', 'FAILED'] })
      .notNull()
      .default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    claimedUntil: timestamp('claimed_until', { withTimezone: true, precision: 3 }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, precision: 3 }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: 'webhook_deliveries_subscription_id_fkey',
      columns: [t.subscriptionId],
      foreignColumns: [webhookSubscriptions.id],
    }).onDelete('cascade'),
    foreignKey({ name: 'webhook_deliveries_event_id_fkey', columns: [t.eventId], foreignColumns: [domainEvents.id] }),
    check('webhook_deliveries_status_check', sql`${t.status} IN ('PENDING', 'SUCCEEDED', 'FAILED')`),
    unique('webhook_deliveries_subscription_event_unique').on(t.subscriptionId, t.eventId),
    index('webhook_deliveries_listing_idx').on(
      t.subscriptionId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'PENDING'`),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);

/**
 * Answers kept for Idempotency-Key retries (migration 0019): in flight while
 * `status` is null, answered in the transaction of the change it reports; the
 * body sealed by the key ring (src/features/idempotency/idempotency-dal.ts).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    id: uuid('id').primaryKey(),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'cascade' }),
    caller: text('caller').notNull(),
    operation: text('operation').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    token: uuid('token').notNull(),
    leaseUntil: timestamp('lease_until', { withTimezone: true }).notNull(),
    status: smallint('status'),
    contentType: text('content_type'),
    location: text('location'),
    body: text('body'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    unique('idempotency_keys_scope_key').on(t.customerId, t.caller, t.operation, t.key),
    index('idempotency_keys_expires_at_idx').on(t.expiresAt),
  ],
);
