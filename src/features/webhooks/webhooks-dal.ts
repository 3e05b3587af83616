/**
 * Webhook subscriptions and their deliveries. Deliveries are a durable queue:
 * fanned out from the domain-event outbox, claimed with FOR UPDATE SKIP LOCKED
 * under a lease (`claimed_until`), so several instances never attempt one
 * delivery at once and one that dies mid-attempt leaves it to another.
 */
import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { queryRows } from '../../db/database.js';
import { webhookDeliveries, webhookSubscriptions } from '../../db/schema.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import type { SealedValues } from '../../lib/sealed-values.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export type SubscriptionStatus = 'ENABLED' | 'DISABLED';
export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

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

/** A claimed delivery with what its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  subscriptionId: string;
  url: string;
  secrets: string[];
  event: {
    id: string;
    type: string;
    created: string;
    customer_id: string;
    request_id: string | null;
    data: unknown;
  };
}

/** How one attempt ended, as the queue records it. */
export interface AttemptResult {
  id: string;
  /** The attempt number it was claimed with: a stale claimant's result is dropped. */
  attempts: number;
  subscriptionId: string;
  status: DeliveryStatus;
  /** PENDING: milliseconds until the next attempt. */
  retryInMs: number | null;
  statusCode: number | null;
  error: string | null;
}

export interface DisabledSubscription {
  id: string;
  customerId: string;
}

/**
 * The queue's statements are planned without bitmap scans, in their own
 * transaction. Processed deliveries and fanned-out events leave index entries
 * behind until a vacuum (at most once a minute). A bitmap scan reads every one
 * of them, every tick, and never marks them dead; an index scan marks them
 * once and skips them after (docs/performance.md, line 7).
 */
async function preferIndexScans(tx: Db): Promise<void> {
  await tx.execute(sql`SET LOCAL enable_bitmapscan = off`);
}

/** Why deliveries of a disabled subscription stop. */
const DISABLED_ERROR = 'the subscription was disabled';

/** A subscription's secrets are stored encrypted, the current and the previous one each bound to its column. */
const cellOf = (id: string, column: 'secret' | 'previous_secret') => ({
  table: 'webhook_subscriptions',
  column,
  row: id,
});

export function createWebhooksDal(db: Db, sealed: SealedValues) {
  /**
   * One tick's work in one statement. Claims up to `claimLimit` due
   * deliveries for `leaseMs`: their attempt counted now (so a crash
   * mid-attempt still counts), the lease moving their next attempt past it, so
   * another instance takes them only if this one dies. Fans out up to
   * `fanOutLimit` events of the outbox: a delivery per ENABLED subscription of
   * the event's customer and type (WEBHOOK_TEST: to the one subscription it
   * names), the events marked done; the new deliveries fill the slots the due
   * ones left, claimed as they are written rather than by a second write.
   * Events and deliveries are claimed with SKIP LOCKED, so instances take
   * different ones.
   */
  async function takeDueIn(
    tx: Db,
    { fanOutLimit, claimLimit, leaseMs }: { fanOutLimit: number; claimLimit: number; leaseMs: number },
  ): Promise<{ fannedOutEvents: number; claimed: ClaimedDelivery[] }> {
    const lease = sql`now() + make_interval(secs => ${leaseMs / 1000})`;
    const rows = await queryRows<{
      fanned_out_events: number;
      id: string | null;
      attempts: number;
      subscription_id: string;
      url: string;
      secret: string;
      previous_secret: string | null;
      event_id: string;
      event_type: string;
      event_created: Date | string;
      customer_id: string;
      request_id: string | null;
      data: unknown;
    }>(
      tx,
      // MATERIALIZED: each locking query runs once, so a rescan can never claim more than its limit.
      sql`
      WITH due AS MATERIALIZED (
        SELECT id FROM webhook_deliveries
        WHERE status = 'PENDING' AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT ${claimLimit} FOR UPDATE SKIP LOCKED
      ), retried AS (
        UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, last_attempt_at = now(), claimed_until = ${lease}, next_attempt_at = ${lease}
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.attempts, d.subscription_id, d.event_id
      ), events AS MATERIALIZED (
        SELECT id, type, customer_id, data, created_at FROM domain_events
        WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT ${fanOutLimit} FOR UPDATE SKIP LOCKED
      ), marked AS (
        UPDATE domain_events e SET fanned_out_at = now() FROM events c WHERE e.id = c.id
      ), targets AS MATERIALIZED (
        SELECT s.id AS subscription_id, c.id AS event_id, c.type,
          row_number() OVER (ORDER BY c.created_at, c.id, s.id) <= ${claimLimit} - (SELECT count(*) FROM due) AS claim
        FROM events c
        JOIN webhook_subscriptions s ON s.customer_id = c.customer_id
        WHERE CASE WHEN c.type = 'WEBHOOK_TEST' THEN s.id::text = c.data->>'webhook_id'
                   ELSE s.status = 'ENABLED' AND c.type = ANY(s.notification_types) END
      ), queued AS (
        INSERT INTO webhook_deliveries
          (subscription_id, event_id, event_type, attempts, last_attempt_at, claimed_until, next_attempt_at)
        SELECT subscription_id, event_id, type, CASE WHEN claim THEN 1 ELSE 0 END,
          CASE WHEN claim THEN now() END, CASE WHEN claim THEN ${lease} END,
          CASE WHEN claim THEN ${lease} ELSE now() END
        FROM targets
        ON CONFLICT DO NOTHING
        RETURNING id, attempts, subscription_id, event_id
      ), claimed AS (
        SELECT * FROM retried UNION ALL SELECT * FROM queued WHERE attempts = 1
      )
      SELECT n.fanned_out_events, c.id, c.attempts, c.subscription_id, s.notification_url AS url, s.secret,
        CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret,
        e.id AS event_id, e.type AS event_type, e.created_at AS event_created, e.customer_id, e.request_id, e.data
      FROM (SELECT count(*)::int AS fanned_out_events FROM events) n
      LEFT JOIN (claimed c
        JOIN webhook_subscriptions s ON s.id = c.subscription_id
        JOIN domain_events e ON e.id = c.event_id) ON true`,
    );
    return {
      fannedOutEvents: rows[0]?.fanned_out_events ?? 0,
      claimed: rows
        .filter((r) => r.id !== null)
        .map((r) => ({
          id: r.id!,
          attempts: r.attempts,
          subscriptionId: r.subscription_id,
          url: r.url,
          // Opened once per stored value and instance, not per attempt; one that does not open signs nothing.
          secrets: [
            sealed.openCached(cellOf(r.subscription_id, 'secret'), r.secret),
            sealed.openCached(cellOf(r.subscription_id, 'previous_secret'), r.previous_secret),
          ].filter((secret) => secret !== null),
          event: {
            id: r.event_id,
            type: r.event_type,
            created: new Date(r.event_created).toISOString(),
            customer_id: r.customer_id,
            request_id: r.request_id,
            data: r.data,
          },
        })),
    };
  }

  /** Marks what is still pending of these subscriptions FAILED, leaving attempts under way to finish. */
  async function failPending(subscriptionIds: string[]): Promise<void> {
    if (subscriptionIds.length === 0) return;
    await db.execute(sql`
      UPDATE webhook_deliveries SET status = 'FAILED', last_error = ${DISABLED_ERROR}
      WHERE subscription_id = ANY(${toUuidArray(subscriptionIds)}::uuid[]) AND status = 'PENDING'
        AND (claimed_until IS NULL OR claimed_until < now())`);
  }

  return {
    /** Serialises a customer's subscription writes, so the limit holds against concurrent creations. */
    async lockCustomer(customerId: string): Promise<void> {
      await db.execute(sql`SELECT 1 FROM customers WHERE id = ${customerId} FOR NO KEY UPDATE`);
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
        .values({ ...values, id, secret: sealed.seal(cellOf(id, 'secret'), values.secret) })
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
              .then(([current]) => sealed.open(cellOf(id, 'secret'), current?.secret ?? null));
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
                secret: sealed.seal(cellOf(id, 'secret'), changes.secret),
                previousSecret: previous === null ? null : sealed.seal(cellOf(id, 'previous_secret'), previous),
                previousSecretExpiresAt: sql`now() + make_interval(secs => ${changes.previousSecretSeconds ?? 0})`,
              }),
          updatedAt: sql`now()`,
        })
        .where(eq(webhookSubscriptions.id, id))
        .returning();
      if (changes.status === 'DISABLED') await failPending([id]);
      return row!;
    },

    /** Deletes it and, by cascade, its deliveries: pending ones are dropped. */
    async remove(id: string): Promise<void> {
      await db.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
    },

    /** The tick's work (`takeDueIn`) in its own transaction, planned without bitmap scans; the attempts start once it has committed. */
    async takeDue(options: { fanOutLimit: number; claimLimit: number; leaseMs: number }) {
      return db.transaction(async (tx) => {
        await preferIndexScans(tx);
        return takeDueIn(tx, options);
      });
    },

    /**
     * Records attempts' outcomes in one statement, and each subscription's run of
     * failures: started by a failure, ended by a success. Answers the
     * subscriptions that have failed for `disableAfterMs` and are now DISABLED.
     */
    async recordResults(results: AttemptResult[], disableAfterMs: number): Promise<DisabledSubscription[]> {
      if (results.length === 0) return [];
      await preferIndexScans(db);
      await db.execute(sql`
        UPDATE webhook_deliveries d
        SET status = r.status, claimed_until = NULL, last_status_code = r.status_code, last_error = r.error,
            next_attempt_at = CASE WHEN r.status = 'PENDING' THEN now() + make_interval(secs => r.retry_ms / 1000.0)
                                   ELSE d.next_attempt_at END
        FROM jsonb_to_recordset(${JSON.stringify(
          results.map((r) => ({
            id: r.id,
            attempts: r.attempts,
            status: r.status,
            retry_ms: r.retryInMs ?? 0,
            status_code: r.statusCode,
            error: r.error,
          })),
        )}::jsonb) AS r(id uuid, attempts int, status text, retry_ms bigint, status_code int, error text)
        WHERE d.id = r.id AND d.attempts = r.attempts AND d.status = 'PENDING'`);
      const bySubscription = new Map<string, boolean>();
      for (const r of results)
        bySubscription.set(
          r.subscriptionId,
          (bySubscription.get(r.subscriptionId) ?? false) || r.status === 'SUCCEEDED',
        );
      const outcomes = [...bySubscription].map(([id, succeeded]) => ({ id, succeeded }));
      const tracked = await queryRows<{ id: string; customer_id: string; disable: boolean }>(
        db,
        sql`
        UPDATE webhook_subscriptions s
        SET failing_since = x.failing_since, status = CASE WHEN x.disable THEN 'DISABLED' ELSE s.status END
        FROM (
          SELECT o.id, CASE WHEN o.succeeded THEN NULL ELSE coalesce(cur.failing_since, now()) END AS failing_since,
                 (NOT o.succeeded AND cur.status = 'ENABLED'
                  AND cur.failing_since <= now() - make_interval(secs => ${disableAfterMs / 1000})) AS disable
          FROM jsonb_to_recordset(${JSON.stringify(outcomes)}::jsonb) AS o(id uuid, succeeded boolean)
          JOIN webhook_subscriptions cur ON cur.id = o.id
        ) x
        -- Only what changes: a healthy subscription's row is not rewritten for every batch.
        WHERE s.id = x.id AND (x.failing_since IS DISTINCT FROM s.failing_since OR x.disable)
        RETURNING s.id, s.customer_id, x.disable`,
      );
      const disabled = tracked.filter((t) => t.disable);
      await failPending(disabled.map((d) => d.id));
      return disabled.map((d) => ({ id: d.id, customerId: d.customer_id }));
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

    /** Deliveries waiting, and the age in seconds of the oldest (metrics). */
    async queueStats(): Promise<{ pending: number; oldestAgeSeconds: number }> {
      const [row] = await queryRows<{ pending: number; oldest: number | null }>(
        db,
        sql`SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest
            FROM webhook_deliveries WHERE status = 'PENDING'`,
      );
      return { pending: row?.pending ?? 0, oldestAgeSeconds: row?.oldest ?? 0 };
    },
  };
}

export type WebhooksDal = ReturnType<typeof createWebhooksDal>;
