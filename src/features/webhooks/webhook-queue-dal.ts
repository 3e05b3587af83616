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
  /** The traceparent of the change that wrote the event (not part of what is sent). */
  traceparent: string | null;
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

/** What one claim may take, and what this instance already has in flight per customer. */
export interface ClaimRequest {
  claimLimit: number;
  leaseMs: number;
  /** The most attempts in flight one customer may have on this instance. */
  perCustomer: number;
  /** This instance's attempts in flight, by customer id. */
  inFlight: ReadonlyMap<string, number>;
}

export interface ClaimResult {
  claimed: ClaimedDelivery[];
  /**
   * Whether due work that no cap held back may be left: the scan of due
   * deliveries was full and claimed whole. Work held back by a customer's cap
   * is that customer's to wait for.
   */
  moreDue: boolean;
  /**
   * Whether the scan found due deliveries it left because their customer would
   * pass its cap, by the count it was given. (Only the cap leaves any: the scan
   * takes no more than the claim may.)
   */
  heldBack: boolean;
}

/** What one fan-out did: events taken from the outbox, and the deliveries they made. */
export interface FanOutResult {
  events: number;
  deliveries: number;
}

/**
 * The queue's statements are planned without bitmap scans, each in its own
 * unit of work (SET LOCAL lasts as long as it). Processed deliveries and fanned-out events leave index entries
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
 * Fans out up to `limit` events of the outbox in one statement: a delivery per
 * ENABLED subscription of the event's customer and type (WEBHOOK_TEST: to the
 * one subscription it names), due at once, the events marked done. Events are
 * taken with SKIP LOCKED, so instances take different ones. Claiming is
 * another statement (`claimDueIn`), so a large fan-out never holds up the
 * attempts of what is already due.
 */
async function fanOutIn(tx: Db, limit: number): Promise<FanOutResult> {
  const [row] = await queryRows<{ events: number; deliveries: number }>(
    tx,
    // MATERIALIZED: the locking query runs once, so a rescan can never take more than its limit.
    sql`
    WITH events AS MATERIALIZED (
      SELECT id, type, customer_id, data FROM domain_events
      WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), marked AS (
      UPDATE domain_events e SET fanned_out_at = now() FROM events c WHERE e.id = c.id
    ), queued AS (
      INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_attempt_at)
      SELECT s.id, c.id, c.type, now()
      FROM events c
      JOIN webhook_subscriptions s ON s.customer_id = c.customer_id
      WHERE CASE WHEN c.type = 'WEBHOOK_TEST' THEN s.id::text = c.data->>'webhook_id'
                 ELSE s.status = 'ENABLED' AND c.type = ANY(s.notification_types) END
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM queued) AS deliveries`,
  );
  return { events: row?.events ?? 0, deliveries: row?.deliveries ?? 0 };
}

/**
 * Claims due deliveries for `leaseMs` in one statement: their attempt counted
 * now (so a crash mid-attempt still counts), the lease moving their next
 * attempt past it, so another instance takes them only if this one dies.
 * Claimed with SKIP LOCKED, so instances take different ones.
 *
 * Fairness is set-based: customers at their cap are left out of the scan of
 * due deliveries (which walks past their backlog), and a window function
 * numbers each customer's candidates after what it has in flight, so none is
 * given more than `perCustomer`.
 */
async function claimDueIn(tx: Db, sealed: SealedValues, request: ClaimRequest): Promise<ClaimResult> {
  const { claimLimit, leaseMs, perCustomer, inFlight } = request;
  const lease = sql`now() + make_interval(secs => ${leaseMs / 1000})`;
  const busy = JSON.stringify([...inFlight].map(([customer_id, n]) => ({ customer_id, n })));
  const capped = toUuidArray([...inFlight].filter(([, n]) => n >= perCustomer).map(([customer]) => customer));
  // At most a cap's worth of due rows a claim: one customer could take no more, and rows locked only to be
  // dropped cost writes; a scan that was full and claimed whole has the worker claim again at once (moreDue).
  const scanLimit = Math.min(claimLimit, perCustomer);
  const rows = await queryRows<{
    scanned: number;
    claimed_due: number;
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
    traceparent: string | null;
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
      SELECT id FROM (
        SELECT c.id, c.next_attempt_at,
          row_number() OVER (PARTITION BY c.customer_id ORDER BY c.next_attempt_at, c.id) + coalesce(b.n, 0) AS place
        FROM candidates c LEFT JOIN busy b ON b.customer_id = c.customer_id
      ) ranked
      WHERE place <= ${perCustomer} ORDER BY next_attempt_at LIMIT ${claimLimit}
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET attempts = d.attempts + 1, last_attempt_at = now(), claimed_until = ${lease}, next_attempt_at = ${lease}
      FROM due WHERE d.id = due.id
      RETURNING d.id, d.attempts, d.subscription_id, d.event_id
    )
    SELECT n.scanned, n.claimed_due,
      c.id, c.attempts, c.subscription_id, s.notification_url AS url, s.secret,
      CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret,
      e.id AS event_id, e.type AS event_type, e.created_at AS event_created, e.customer_id, e.request_id, e.traceparent, e.data
    FROM (SELECT (SELECT count(*)::int FROM candidates) AS scanned,
                 (SELECT count(*)::int FROM due) AS claimed_due) n
    LEFT JOIN (claimed c
      JOIN webhook_subscriptions s ON s.id = c.subscription_id
      JOIN domain_events e ON e.id = c.event_id) ON true`,
  );
  const first = rows[0];
  const scanned = first?.scanned ?? 0;
  return {
    moreDue: scanLimit > 0 && scanned === scanLimit && first?.claimed_due === scanned,
    heldBack: (first?.claimed_due ?? 0) < scanned,
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
        traceparent: r.traceparent,
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
    /** New events to deliveries (`fanOutIn`), planned without bitmap scans; in a unit of work of its own. */
    async fanOut(limit: number): Promise<FanOutResult> {
      await preferIndexScans(db);
      return fanOutIn(db, limit);
    },

    /** A claim (`claimDueIn`), planned without bitmap scans; in a unit of work of its own, so the attempts start once it has committed. */
    async claimDue(request: ClaimRequest): Promise<ClaimResult> {
      await preferIndexScans(db);
      return claimDueIn(db, sealed, request);
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
