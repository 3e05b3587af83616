/**
 * The deliveries' durable queue: fanned out from the domain-event outbox,
 * claimed with FOR UPDATE SKIP LOCKED under a lease (`claimed_until`), so
 * several instances never attempt one delivery at once and one that dies
 * mid-attempt leaves it to another. Claims are fair between customers: none
 * is given more than its share of an instance's attempts in flight, so one
 * customer's dead receivers never hold another's deliveries back.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { queryRows } from '../../db/database.js';
import type { SealedValues } from '../../lib/sealed-values.js';
import { toUuidArray } from '../../lib/uuid-array.js';

export type QueueStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

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
  status: QueueStatus;
  /** PENDING: milliseconds until the next attempt. */
  retryInMs: number | null;
  statusCode: number | null;
  error: string | null;
}

export interface DisabledSubscription {
  id: string;
  customerId: string;
}

/** What one tick may claim, and what this instance already has in flight per customer. */
export interface ClaimRequest {
  fanOutLimit: number;
  claimLimit: number;
  leaseMs: number;
  /** The most attempts in flight one customer may have on this instance. */
  perCustomer: number;
  /** This instance's attempts in flight, by customer id. */
  inFlight: ReadonlyMap<string, number>;
}

export interface ClaimResult {
  fannedOutEvents: number;
  claimed: ClaimedDelivery[];
  /**
   * Whether due work that no cap held back may be left: the scan of due
   * deliveries was full and claimed whole, or new deliveries found no free slot.
   * Work held back by a customer's cap is that customer's to wait for.
   */
  moreDue: boolean;
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

/** Marks what is still pending of these subscriptions FAILED, leaving attempts under way to finish. */
export async function failPendingIn(db: Db, subscriptionIds: string[]): Promise<void> {
  if (subscriptionIds.length === 0) return;
  await db.execute(sql`
    UPDATE webhook_deliveries SET status = 'FAILED', last_error = ${DISABLED_ERROR}
    WHERE subscription_id = ANY(${toUuidArray(subscriptionIds)}::uuid[]) AND status = 'PENDING'
      AND (claimed_until IS NULL OR claimed_until < now())`);
}

/**
 * One tick's work in one statement. Claims due deliveries for `leaseMs`: their
 * attempt counted now (so a crash mid-attempt still counts), the lease moving
 * their next attempt past it, so another instance takes them only if this one
 * dies. Fans out up to `fanOutLimit` events of the outbox: a delivery per
 * ENABLED subscription of the event's customer and type (WEBHOOK_TEST: to the
 * one subscription it names), the events marked done; the new deliveries fill
 * the slots the due ones left, claimed as they are written rather than by a
 * second write. Events and deliveries are claimed with SKIP LOCKED, so
 * instances take different ones.
 *
 * Fairness is set-based, at claim time: customers at their cap are left out of
 * the scan of due deliveries (which walks past their backlog), and a window
 * function numbers each customer's candidates after what it has in flight, so
 * none is given more than `perCustomer`; new deliveries are numbered the same
 * way, after the due ones claimed in the same statement.
 */
async function takeDueIn(tx: Db, sealed: SealedValues, request: ClaimRequest): Promise<ClaimResult> {
  const { fanOutLimit, claimLimit, leaseMs, perCustomer, inFlight } = request;
  const lease = sql`now() + make_interval(secs => ${leaseMs / 1000})`;
  const busy = JSON.stringify([...inFlight].map(([customer_id, n]) => ({ customer_id, n })));
  const capped = toUuidArray([...inFlight].filter(([, n]) => n >= perCustomer).map(([customer]) => customer));
  // At most a cap's worth of due rows a claim: one customer could take no more, and rows locked only to be
  // dropped cost writes; a scan that was full and claimed whole has the worker claim again at once (moreDue).
  const scanLimit = Math.min(claimLimit, perCustomer);
  const rows = await queryRows<{
    fanned_out_events: number;
    scanned: number;
    claimed_due: number;
    unclaimed_fitting: number;
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
    WITH busy AS MATERIALIZED (
      SELECT customer_id, n FROM jsonb_to_recordset(${busy}::jsonb) AS b(customer_id uuid, n int)
    ), candidates AS MATERIALIZED (
      SELECT d.id, d.next_attempt_at, s.customer_id FROM webhook_deliveries d
      JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.status = 'PENDING' AND d.next_attempt_at <= now() AND s.customer_id <> ALL(${capped}::uuid[])
      ORDER BY d.next_attempt_at LIMIT ${scanLimit} FOR UPDATE OF d SKIP LOCKED
    ), due AS MATERIALIZED (
      SELECT id, customer_id FROM (
        SELECT c.id, c.customer_id, c.next_attempt_at,
          row_number() OVER (PARTITION BY c.customer_id ORDER BY c.next_attempt_at, c.id) + coalesce(b.n, 0) AS place
        FROM candidates c LEFT JOIN busy b ON b.customer_id = c.customer_id
      ) ranked
      WHERE place <= ${perCustomer} ORDER BY next_attempt_at LIMIT ${claimLimit}
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
    ), fitting AS MATERIALIZED (
      SELECT s.id AS subscription_id, c.id AS event_id, c.type, c.created_at,
        row_number() OVER (PARTITION BY s.customer_id ORDER BY c.created_at, c.id, s.id)
          + coalesce((SELECT b.n FROM busy b WHERE b.customer_id = s.customer_id), 0)
          + (SELECT count(*) FROM due WHERE due.customer_id = s.customer_id) <= ${perCustomer} AS fits
      FROM events c
      JOIN webhook_subscriptions s ON s.customer_id = c.customer_id
      WHERE CASE WHEN c.type = 'WEBHOOK_TEST' THEN s.id::text = c.data->>'webhook_id'
                 ELSE s.status = 'ENABLED' AND c.type = ANY(s.notification_types) END
    ), targets AS MATERIALIZED (
      SELECT subscription_id, event_id, type, fits,
        fits AND sum(fits::int) OVER (ORDER BY created_at, event_id, subscription_id)
          <= ${claimLimit} - (SELECT count(*) FROM due) AS claim
      FROM fitting
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
    SELECT n.fanned_out_events, n.scanned, n.claimed_due, n.unclaimed_fitting,
      c.id, c.attempts, c.subscription_id, s.notification_url AS url, s.secret,
      CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret,
      e.id AS event_id, e.type AS event_type, e.created_at AS event_created, e.customer_id, e.request_id, e.data
    FROM (SELECT (SELECT count(*)::int FROM events) AS fanned_out_events,
                 (SELECT count(*)::int FROM candidates) AS scanned,
                 (SELECT count(*)::int FROM due) AS claimed_due,
                 (SELECT count(*)::int FROM targets WHERE fits AND NOT claim) AS unclaimed_fitting) n
    LEFT JOIN (claimed c
      JOIN webhook_subscriptions s ON s.id = c.subscription_id
      JOIN domain_events e ON e.id = c.event_id) ON true`,
  );
  const first = rows[0];
  const scanned = first?.scanned ?? 0;
  return {
    fannedOutEvents: first?.fanned_out_events ?? 0,
    moreDue:
      (scanLimit > 0 && scanned === scanLimit && first?.claimed_due === scanned) || (first?.unclaimed_fitting ?? 0) > 0,
    claimed: rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: r.id!,
        attempts: r.attempts,
        subscriptionId: r.subscription_id,
        url: r.url,
        // Opened once per stored value and instance, not per attempt; one that does not open signs nothing.
        secrets: [
          sealed.openCached(secretCellOf(r.subscription_id, 'secret'), r.secret),
          sealed.openCached(secretCellOf(r.subscription_id, 'previous_secret'), r.previous_secret),
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

/** A subscription's secrets are stored encrypted, the current and the previous one each bound to its column. */
export const secretCellOf = (id: string, column: 'secret' | 'previous_secret') => ({
  table: 'webhook_subscriptions',
  column,
  row: id,
});

export function createWebhookQueueDal(db: Db, sealed: SealedValues) {
  return {
    /** The tick's work (`takeDueIn`), planned without bitmap scans; in a unit of work, so the attempts start once it has committed. */
    async takeDue(request: ClaimRequest): Promise<ClaimResult> {
      await preferIndexScans(db);
      return takeDueIn(db, sealed, request);
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
      await failPendingIn(
        db,
        disabled.map((d) => d.id),
      );
      return disabled.map((d) => ({ id: d.id, customerId: d.customer_id }));
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

export type WebhookQueueDal = ReturnType<typeof createWebhookQueueDal>;
