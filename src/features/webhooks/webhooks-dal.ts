/**
 * Webhook subscriptions and their deliveries: what the API reads and changes.
 * The queue the delivery worker claims from is webhook-queue-dal.ts, part of
 * this DAL.
 */
import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { webhookDeliveries, webhookSubscriptions } from '../../db/schema.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { type QueueStatus, createWebhookQueueDal, failPendingIn, secretCellOf } from './webhook-queue-dal.js';
import type { SealedValues } from '../../lib/sealed-values.js';
import { subscribesToAuditRecords } from '../events/audit-record-events.js';

export type SubscriptionStatus = 'ENABLED' | 'DISABLED';
export type DeliveryStatus = QueueStatus;

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export interface SubscriptionChanges {
  notificationUrl?: string;
  notificationTypes?: string[];
  status?: SubscriptionStatus;
  /** A new secret: the current one keeps signing beside it for `previousSecretSeconds`. */
  secret?: string;
  previousSecretSeconds?: number;
}

export function createWebhooksDal(db: Db, sealed: SealedValues) {
  return {
    ...createWebhookQueueDal(db, sealed),

    /** Serialises a customer's subscription writes, so the limit holds against concurrent creations. */
    async lockCustomer(customerId: string): Promise<void> {
      await db.execute(sql`SELECT 1 FROM customers WHERE id = ${customerId} FOR NO KEY UPDATE`);
    },

    /** Whether the customer takes its audit records as AUDIT_RECORD events (a login then writes through the unit of work). */
    subscribesToAuditRecords(customerId: string): Promise<boolean> {
      return subscribesToAuditRecords(db, customerId);
    },

    async countForCustomer(customerId: string): Promise<number> {
      const [row] = await db
        .select({ total: count() })
        .from(webhookSubscriptions)
        .where(eq(webhookSubscriptions.customerId, customerId));
      return row?.total ?? 0;
    },

    async insert(values: {
      customerId: string;
      notificationUrl: string;
      notificationTypes: string[];
      secret: string;
    }): Promise<SubscriptionRow> {
      // The id is made here: it is bound into the secret's encryption before the row exists.
      const id = randomUUID();
      const [row] = await db
        .insert(webhookSubscriptions)
        .values({ ...values, id, secret: sealed.seal(secretCellOf(id, 'secret'), values.secret) })
        .returning();
      return row!;
    },

    /** The subscription if it belongs to the customer; `lock` for a change. */
    async find(id: string, customerId: string, lock = false): Promise<SubscriptionRow | undefined> {
      const query = db
        .select()
        .from(webhookSubscriptions)
        .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.customerId, customerId)));
      const [row] = await (lock ? query.for('update') : query);
      return row;
    },

    async list(customerId: string, page: PageRequest): Promise<{ rows: SubscriptionRow[]; total: number }> {
      const where = eq(webhookSubscriptions.customerId, customerId);
      const [totalRow] = await db.select({ total: count() }).from(webhookSubscriptions).where(where);
      const rows = await db
        .select()
        .from(webhookSubscriptions)
        .where(where)
        .orderBy(desc(webhookSubscriptions.createdAt), desc(webhookSubscriptions.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
    },

    /** Every ENABLED subscription of the customer (the mock payment notification goes to each). */
    async listEnabledIds(customerId: string): Promise<string[]> {
      const rows = await db
        .select({ id: webhookSubscriptions.id })
        .from(webhookSubscriptions)
        .where(and(eq(webhookSubscriptions.customerId, customerId), eq(webhookSubscriptions.status, 'ENABLED')));
      return rows.map((r) => r.id);
    },

    /** Applies the changes; disabling fails what is pending, enabling forgets past failures. */
    async update(id: string, changes: SubscriptionChanges): Promise<SubscriptionRow> {
      // The current secret becomes the previous one: opened and sealed again, bound to its new column.
      const previous =
        changes.secret === undefined
          ? null
          : await db
              .select({ secret: webhookSubscriptions.secret })
              .from(webhookSubscriptions)
              .where(eq(webhookSubscriptions.id, id))
              .then(([current]) => sealed.open(secretCellOf(id, 'secret'), current?.secret ?? null));
      const [row] = await db
        .update(webhookSubscriptions)
        .set({
          ...(changes.notificationUrl === undefined ? {} : { notificationUrl: changes.notificationUrl }),
          ...(changes.notificationTypes === undefined ? {} : { notificationTypes: changes.notificationTypes }),
          ...(changes.status === undefined
            ? {}
            : { status: changes.status, ...(changes.status === 'ENABLED' ? { failingSince: null } : {}) }),
          ...(changes.secret === undefined
            ? {}
            : {
                secret: sealed.seal(secretCellOf(id, 'secret'), changes.secret),
                previousSecret: previous === null ? null : sealed.seal(secretCellOf(id, 'previous_secret'), previous),
                previousSecretExpiresAt: sql`now() + make_interval(secs => ${changes.previousSecretSeconds ?? 0})`,
              }),
          updatedAt: sql`now()`,
        })
        .where(eq(webhookSubscriptions.id, id))
        .returning();
      if (changes.status === 'DISABLED') await failPendingIn(db, [id]);
      return row!;
    },

    /** Deletes it and, by cascade, its deliveries: pending ones are dropped. */
    async remove(id: string): Promise<void> {
      await db.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
    },

    async listDeliveries(
      subscriptionId: string,
      status: DeliveryStatus | undefined,
      page: PageRequest,
    ): Promise<{ rows: DeliveryRow[]; total: number }> {
      const where = and(
        eq(webhookDeliveries.subscriptionId, subscriptionId),
        status === undefined ? undefined : eq(webhookDeliveries.status, status),
      );
      const [totalRow] = await db.select({ total: count() }).from(webhookDeliveries).where(where);
      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(where)
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
    },

    /**
     * Makes a delivery due now (PENDING again if it had ended), unless an
     * attempt is under way; answers the delivery, or undefined if the
     * subscription has no such delivery.
     */
    async retryNow(subscriptionId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
      const where = and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.subscriptionId, subscriptionId));
      const [retried] = await db
        .update(webhookDeliveries)
        .set({ status: 'PENDING', nextAttemptAt: sql`now()` })
        .where(
          and(where, sql`(${webhookDeliveries.claimedUntil} IS NULL OR ${webhookDeliveries.claimedUntil} < now())`),
        )
        .returning();
      if (retried) return retried;
      const [underWay] = await db.select().from(webhookDeliveries).where(where);
      return underWay;
    },
  };
}

export type WebhooksDal = ReturnType<typeof createWebhooksDal>;
