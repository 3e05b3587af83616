/**
 * Webhook delivery under load: 10,000 events (WEBHOOK_TEST, written by the
 * mock payment notification to 20 subscriptions at once) delivered to a
 * receiver on 127.0.0.1 that the bench starts and the service is allowed to
 * reach (WEBHOOK_ALLOWED_HOSTS). Reports deliveries per second, from the first
 * event's commit to the last receipt, and the p99 from each event's commit
 * (its `created`) to its receipt.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectStatus, type LoadResult, login, mapConcurrent, request } from './load.js';
import { keyAuth, type PhaseContext } from './phases.js';

export const WEBHOOK_EVENTS = 10_000;
const SUBSCRIPTIONS = 20;

export interface WebhookRun {
  events: number;
  deliveries: number;
  duplicates: number;
  seconds: number;
  deliveriesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** GET /v1/users/me with X-Api-Key, loaded while the events are written and delivered. */
  keyAuthDuring: LoadResult;
}

export interface WebhookReceiver {
  host: string;
  url: string;
  close(): Promise<void>;
  /** Commit-to-receipt latencies (ms) by event id, first receipt only. */
  latencies: Map<string, number>;
  duplicates(): number;
}

/** Started before the service, whose WEBHOOK_ALLOWED_HOSTS must name it. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const latencies = new Map<string, number>();
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created: string };
      if (latencies.has(event.id)) duplicates++;
      else latencies.set(event.id, received - Date.parse(event.created));
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/hooks`,
    latencies,
    duplicates: () => duplicates,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** `keys`: API keys of the main customer, to load key authentication beside the deliveries. */
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
  const started = Date.now();
  const keyAuthDuring = keyAuth(ctx, keys);
  const sent = await mapConcurrent(
    Array.from({ length: calls }, (_, i) => i),
    16,
    () => request(ctx.baseUrl, 'POST', '/v1/webhooks/mock/send-payment-notification', { headers }),
  );
  const refused = sent.filter((r) => r.status !== 202);
  if (refused.length)
    expectStatus(refused[0]!, 202, `POST /v1/webhooks/mock/send-payment-notification (${refused.length} of ${calls})`);
  ctx.log(
    `${WEBHOOK_EVENTS} events written in ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for their deliveries`,
  );
  const deadline = Date.now() + 120_000;
  while (receiver.latencies.size < WEBHOOK_EVENTS && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const finished = Date.now();
  const during = await keyAuthDuring;
  const sorted = [...receiver.latencies.values()].sort((a, b) => a - b);
  const seconds = (finished - started) / 1000;
  return {
    events: WEBHOOK_EVENTS,
    deliveries: receiver.latencies.size,
    duplicates: receiver.duplicates(),
    seconds,
    deliveriesPerSec: receiver.latencies.size / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    keyAuthDuring: during,
  };
}
