/**
 * The delivery worker (docs/webhooks.md, "Delivery"). One loop fans the
 * outbox's new events out to deliveries; another claims what is due, up to the
 * attempts this instance may have in flight; attempts run concurrently and
 * their outcomes are written back in batches. A NOTIFY on commit (the
 * outbox's trigger, a retry) wakes both at once; a poll every second catches
 * what a missed notice or a due retry leaves. At least once: an outcome that
 * cannot be written leaves the delivery's lease to expire, and it is attempted
 * again. Fair: one customer holds at most half of the attempts in flight, so
 * its slow or dead receivers leave the other half to everyone else; the claim
 * itself keeps the cap (webhook-queue-dal.ts), this worker counts what each
 * customer has in flight.
 */
import { setMaxListeners } from 'node:events';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { createBackgroundWorker } from '../../lib/background-worker.js';
import { SYSTEM_CONTEXT } from '../../lib/change-context.js';
import { webhookAttemptDuration, webhookAttempts } from '../../lib/metrics.js';
import type { Log } from '../../lib/log.js';
import type { WebhookSender } from './webhook-sender.js';
import type { AttemptResult, ClaimedDelivery } from './webhook-queue-dal.js';
import { type WebhooksDals, WEBHOOKS_CHANNEL } from './webhooks-service.js';

/** Events fanned out per statement. */
const FAN_OUT_BATCH = 500;
const POLL_INTERVAL_MS = 1000;
/** How long an attempt's outcome may wait to be written with others'. */
const OUTCOME_WRITE_MS = 100;
/** A subscription whose every delivery has failed for this long is DISABLED. */
export const DISABLE_AFTER_MS = 5 * 86_400_000;
/** Retries wait their scheduled time ±20%, so receivers that failed together are not retried together. */
const JITTER = 0.2;

export interface DeliveryOptions {
  uow: UnitOfWork<WebhooksDals>;
  sender: WebhookSender;
  listen(channel: string, onMessage: () => void): Promise<() => Promise<void>>;
  /** Waits before each retry, in milliseconds; FAILED after the last. */
  retrySchedule: readonly number[];
  timeoutMs: number;
  concurrency: number;
  log: Log;
  /** How often both workers look for work no notice announced (a retry falling due, a notice missed); 1 s. */
  pollIntervalMs?: number;
}

/** The most attempts in flight one customer may have: half the instance's, at least one. */
export function perCustomerCap(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 2));
}

export function jittered(ms: number, random = Math.random): number {
  return Math.round(ms * (1 - JITTER + 2 * JITTER * random()));
}

export function createWebhookDelivery(options: DeliveryOptions) {
  const { uow, sender, retrySchedule, concurrency, log, pollIntervalMs = POLL_INTERVAL_MS } = options;
  /** Long enough for an attempt and writing its outcome; past it another instance may take the delivery. */
  const leaseMs = options.timeoutMs + 30_000;
  const perCustomer = perCustomerCap(concurrency);
  /** Attempts in flight by customer id (absent: none). */
  const inFlightBy = new Map<string, number>();
  /** Customers that reached their cap with work possibly left: each wakes the claimer once half of theirs are done. */
  const heldAtCap = new Set<string>();
  const shutdown = new AbortController();
  // Each attempt in flight listens for the stop: up to `concurrency` listeners, not a leak to warn of.
  setMaxListeners(concurrency, shutdown.signal);
  const inFlight = new Set<Promise<void>>();
  let outcomes: AttemptResult[] = [];
  let flushing: Promise<void> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  /** Whether the last claim took all it asked for: more may be due as soon as a slot frees. */
  let moreDue = true;
  let unlisten: (() => Promise<void>) | undefined;

  /** The outcome as the queue records it: delivered, retried after its wait, or FAILED after the last. */
  function resultOf(delivery: ClaimedDelivery, ok: boolean, statusCode: number | null, error: string | null) {
    const wait = retrySchedule[delivery.attempts - 1];
    const status = ok ? 'SUCCEEDED' : wait === undefined ? 'FAILED' : 'PENDING';
    return {
      id: delivery.id,
      attempts: delivery.attempts,
      subscriptionId: delivery.subscriptionId,
      status,
      retryInMs: status === 'PENDING' ? jittered(wait!) : null,
      statusCode,
      error,
    } satisfies AttemptResult;
  }

  /** Writes the outcomes recorded so far in one transaction; those recorded meanwhile wait for the next. */
  async function writeOutcomes(): Promise<void> {
    flushTimer = undefined;
    const batch = outcomes;
    outcomes = [];
    try {
      await uow.write(SYSTEM_CONTEXT, async ({ dal: { webhooks }, audit }) => {
        for (const disabled of await webhooks.recordResults(batch, DISABLE_AFTER_MS))
          await audit({
            action: 'webhook.disabled',
            customerId: disabled.customerId,
            targetType: 'webhook',
            targetId: disabled.id,
            details: { reason: 'every delivery failed for 5 days' },
          });
      });
    } catch (err) {
      // Their leases expire and the deliveries are attempted again: at least once, never lost.
      log.warn({ err, deliveries: batch.length }, 'could not record webhook attempts; they will be retried');
    }
    flushing = undefined;
    if (outcomes.length > 0) scheduleWrite();
  }

  /** Outcomes are written OUTCOME_WRITE_MS after the first of a batch: a transaction per batch, not per attempt. */
  function scheduleWrite(): void {
    flushTimer ??= setTimeout(() => {
      flushing = writeOutcomes();
    }, OUTCOME_WRITE_MS);
  }

  function record(result: AttemptResult): void {
    outcomes.push(result);
    if (!flushing) scheduleWrite();
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const outcome = await sender.attempt(
      {
        url: delivery.url,
        eventId: delivery.event.id,
        body: JSON.stringify(delivery.event),
        secrets: delivery.secrets,
        traceparent: delivery.traceparent,
      },
      shutdown.signal,
    );
    const interrupted = shutdown.signal.aborted && !outcome.ok;
    webhookAttempts.inc({ outcome: interrupted ? 'interrupted' : outcome.ok ? 'succeeded' : 'failed' });
    webhookAttemptDuration.observe(outcome.durationMs / 1000);
    if (interrupted) {
      // Stopping cut it short: due again at once, on whichever instance runs next.
      record({
        ...resultOf(delivery, false, null, 'interrupted: the instance stopped'),
        status: 'PENDING',
        retryInMs: 0,
      });
      return;
    }
    record(resultOf(delivery, outcome.ok, outcome.statusCode, outcome.error));
  }

  function start(delivery: ClaimedDelivery): void {
    const customer = delivery.event.customer_id;
    inFlightBy.set(customer, (inFlightBy.get(customer) ?? 0) + 1);
    const running = attempt(delivery)
      .catch((err) => log.warn({ err }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        inFlight.delete(running);
        const left = inFlightBy.get(customer)! - 1;
        if (left === 0) inFlightBy.delete(customer);
        else inFlightBy.set(customer, left);
        // Claim again once half the slots are free, if due work was left behind, or once a customer held at
        // its cap has half of its own free: a batch per claim, not a statement per finished attempt. New work
        // wakes the claimer itself (a fan-out, the poll), which also finds what a cap kept waiting behind it.
        if (heldAtCap.has(customer) && left <= perCustomer / 2) {
          heldAtCap.delete(customer);
          claimer.wake();
        } else if (moreDue && inFlight.size <= concurrency / 2) claimer.wake();
      });
    inFlight.add(running);
  }

  /** Claims what is due up to the free slots, keeping each customer under its cap (webhook-queue-dal.ts). */
  const claimer = createBackgroundWorker({
    name: 'webhook-delivery',
    intervalMs: pollIntervalMs,
    log,
    async tick() {
      const claimLimit = concurrency - inFlight.size;
      if (claimLimit <= 0) {
        // Every slot busy: the next finished attempt wakes the claimer again.
        moreDue = true;
        return false;
      }
      const claim = { claimLimit, leaseMs, perCustomer, inFlight: inFlightBy };
      const result = await uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.webhooks.claimDue(claim));
      moreDue = result.moreDue;
      for (const delivery of result.claimed) start(delivery);
      for (const [customer, n] of inFlightBy) if (n >= perCustomer) heldAtCap.add(customer);
      // A claim that held deliveries back at a customer's cap claims again at once: the attempts that ended
      // while it ran may have left that customer below its cap, with no slot held at the cap whose end would wake
      // the claimer, and its backlog may have filled the scan ahead of other customers' due deliveries. The next
      // claim counts afresh and leaves out customers at their cap. Never a loop without progress: a customer held
      // back was scanned below its cap, so a delivery of its was claimed.
      return (moreDue || result.heldBack) && inFlight.size < concurrency;
    },
  });

  /**
   * Turns the outbox's new events into deliveries, apart from the claimer: a
   * fan-out of a large batch never holds up the attempts of what is already
   * due. Woken by a notice (an event committed) and the poll, for a notice
   * missed while the LISTEN connection was down.
   */
  const fanOut = createBackgroundWorker({
    name: 'webhook-fan-out',
    intervalMs: pollIntervalMs,
    log,
    async tick() {
      const made = await uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.webhooks.fanOut(FAN_OUT_BATCH));
      if (made.deliveries > 0) claimer.wake();
      return made.events === FAN_OUT_BATCH;
    },
  });

  /** A notice: an event committed (to fan out) or a delivery made due (a retry asked for). */
  const onNotice = () => {
    fanOut.wake();
    claimer.wake();
  };

  return {
    async start(): Promise<void> {
      unlisten = await options.listen(WEBHOOKS_CHANNEL, onNotice);
      fanOut.start();
      claimer.start();
    },
    /** Stops claiming, cuts attempts under way short (they are due again at once) and writes their outcomes. */
    async stop(): Promise<void> {
      await Promise.all([fanOut.stop(), claimer.stop()]);
      shutdown.abort();
      await Promise.all(inFlight);
      await flushing;
      clearTimeout(flushTimer);
      if (outcomes.length > 0) await writeOutcomes();
      await unlisten?.().catch(() => {});
    },
  };
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
