/**
 * Webhook delivery under load, to a receiver on 127.0.0.1 that the bench
 * starts and the service is allowed to reach (WEBHOOK_ALLOWED_HOSTS), in two
 * rounds of 10,000 events (WEBHOOK_TEST, written by the mock payment
 * notification to 20 subscriptions at once):
 * - a burst, written as fast as 16 callers can: deliveries per second, from the
 *   first call to the last receipt (the throughput);
 * - a steady 500 events a second, the budget's rate, with key authentication
 *   loaded beside it: the p99 from each event's commit (its `created`) to its
 *   receipt, and what key authentication keeps of the ceiling, measured on this
 *   process just before and just after (with key auth alone between, to show
 *   what delivering takes from it). A burst's p99 is
 *   the wait behind the events written before it, which grows with the burst's
 *   size and the writers' speed; at a rate the service sustains, it is the time
 *   a delivery takes.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { expectStatus, type JsonResponse, type LoadResult, login, mapConcurrent, percentile, request } from './load.js';
import { betweenCeilings, keyAuth, type PhaseContext } from './phases.js';
import type { ProcessCeiling } from './report.js';

export const WEBHOOK_EVENTS = 10_000;
const SUBSCRIPTIONS = 20;
/** The steady round's rate: the budget's deliveries per second. */
export const STEADY_EVENTS_PER_SEC = 500;

/** One round of 10,000 events. */
export interface WebhookRound {
  events: number;
  deliveries: number;
  duplicates: number;
  /** From the first call to the last receipt. */
  seconds: number;
  deliveriesPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export interface WebhookRun {
  burst: WebhookRound;
  steady: WebhookRound & {
    eventsPerSec: number;
    /** GET /v1/users/me with X-Api-Key on this process, just before the round. */
    keyAuthAlone: LoadResult;
    /** The same, loaded while the steady round's events are written and delivered. */
    keyAuthDuring: LoadResult;
    /** /health on this process before key auth alone and after the round: the ceiling both divide by. */
    ceiling: ProcessCeiling;
  };
}

export interface WebhookReceiver {
  host: string;
  url: string;
  close(): Promise<void>;
  /** Events received so far (first receipts) since the last `take`. */
  count(): Promise<number>;
  /** The commit-to-receipt latencies (ms) of first receipts and the number of repeats since the last `take`. */
  take(): Promise<{ latencies: number[]; duplicates: number }>;
}

/**
 * Started before the service, whose WEBHOOK_ALLOWED_HOSTS must name it; in its
 * own thread (bench/webhook-receiver-worker.mjs). Asks and answers in turn: one
 * question at a time.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const worker = new Worker(new URL('./webhook-receiver-worker.mjs', import.meta.url));
  const answer = <T>() => once(worker, 'message').then(([message]) => message as T);
  const { port } = await answer<{ port: number }>();
  const ask = <T>(question: string) => {
    const answered = answer<T>();
    worker.postMessage(question);
    return answered;
  };
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/hooks`,
    count: async () => (await ask<{ count: number }>('count')).count,
    take: () => ask('take'),
    async close() {
      const exited = once(worker, 'exit');
      worker.postMessage('close');
      await exited;
    },
  };
}

type Send = () => Promise<JsonResponse>;

/** Waits until every event of the round arrived (or two minutes), and measures the round. */
async function measureRound(
  ctx: PhaseContext,
  receiver: WebhookReceiver,
  started: number,
  sent: JsonResponse[],
): Promise<WebhookRound> {
  const refused = sent.filter((r) => r.status !== 202);
  if (refused.length)
    expectStatus(
      refused[0]!,
      202,
      `POST /v1/webhooks/mock/send-payment-notification (${refused.length} of ${sent.length})`,
    );
  ctx.log(
    `${WEBHOOK_EVENTS} events written in ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for their deliveries`,
  );
  const deadline = Date.now() + 120_000;
  while ((await receiver.count()) < WEBHOOK_EVENTS && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const seconds = (Date.now() - started) / 1000;
  const { latencies, duplicates } = await receiver.take();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    events: WEBHOOK_EVENTS,
    deliveries: latencies.length,
    duplicates,
    seconds,
    deliveriesPerSec: latencies.length / seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
  };
}

/** Calls `send` `calls` times, `perSec` a second on a fixed schedule, whatever the answers' times (an open loop). */
async function atRate(calls: number, perSec: number, send: Send): Promise<JsonResponse[]> {
  const started = performance.now();
  const pending: Array<Promise<JsonResponse>> = [];
  for (let i = 0; i < calls; i++) {
    const due = started + (i * 1000) / perSec;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(send());
  }
  return Promise.all(pending);
}

/** `keys`: API keys of the main customer, to load key authentication beside the steady round. */
export async function runWebhookBench(
  ctx: PhaseContext,
  receiver: WebhookReceiver,
  keys: string[],
): Promise<WebhookRun> {
  const token = await login(ctx.baseUrl, ctx.seed.main.login);
  const headers = { authorization: `Bearer ${token}` };
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const created = await request(ctx.baseUrl, 'POST', '/v1/webhooks', {
      headers,
      body: {
        notification_url: `${receiver.url}/${i}`,
        notification_type: ['API_KEY_REVOKED'],
        secret_key: 'Bench#Secret1',
      },
    });
    expectStatus(created, 201, 'POST /v1/webhooks');
  }
  const calls = WEBHOOK_EVENTS / SUBSCRIPTIONS;
  const send: Send = () => request(ctx.baseUrl, 'POST', '/v1/webhooks/mock/send-payment-notification', { headers });

  let started = Date.now();
  const burst = await measureRound(
    ctx,
    receiver,
    started,
    await mapConcurrent(
      Array.from({ length: calls }, (_, i) => i),
      16,
      send,
    ),
  );

  const { result: steady, ceiling } = await betweenCeilings(ctx, async () => {
    const keyAuthAlone = await keyAuth(ctx, keys);
    started = Date.now();
    const keyAuthDuring = keyAuth(ctx, keys);
    const round = await measureRound(
      ctx,
      receiver,
      started,
      await atRate(calls, STEADY_EVENTS_PER_SEC / SUBSCRIPTIONS, send),
    );
    return { ...round, keyAuthAlone, keyAuthDuring: await keyAuthDuring };
  });
  return { burst, steady: { ...steady, eventsPerSec: STEADY_EVENTS_PER_SEC, ceiling } };
}
