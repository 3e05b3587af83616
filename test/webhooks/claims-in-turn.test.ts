/**
 * The claimer claims again on its own while due deliveries are left, never
 * waiting for its poll. A claim counts a customer's attempts in flight as it
 * runs and holds back what would pass the customer's cap by that count:
 * - attempts that end while it commits free room it cannot see, and that room
 *   must start a new claim (on a machine whose commits took 100 ms, a burst of
 *   10,000 went at about 350 a second while it did not);
 * - a customer's backlog fills the claim's scan, hiding another customer's due
 *   deliveries behind it, and the claim after, which leaves out the customer
 *   now at its cap, must find them.
 *
 * Here the poll never comes (an hour), so a delivery arrives only if claims
 * lead to one another; every transaction waits 50 ms before it commits, and the
 * receiver answers after 120 or 140 ms in turn, so that a customer's attempts end
 * one while a claim commits. The delivery worker is built on the test's database
 * beside an app that has none of its own.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { count, eq } from 'drizzle-orm';
import { keyRingOf } from '../../src/config.js';
import { createDataLayer } from '../../src/data-layer.js';
import { webhookDeliveries } from '../../src/db/schema.js';
import { createWebhookDelivery, perCustomerCap } from '../../src/features/webhooks/webhook-delivery.js';
import { createWebhookSender } from '../../src/features/webhooks/webhook-sender.js';
import { SILENT_LOG } from '../../src/lib/log.js';
import { createSealedValues } from '../../src/lib/sealed-values.js';
import { useTestApp } from '../helpers/app.js';
import { customerSession, loginAs } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { type Receiver, startReceiver, subscribe, webhookRequest } from '../helpers/webhooks.js';

const h = useTestApp();
/** A cap of two a customer: many claims, each racing the attempts it follows. */
const CONCURRENCY = 4;
const SUBSCRIPTIONS = 20;
/** Mock notifications: an event to every subscription of the caller's customer each. */
const NOTIFICATIONS = 2;
const BACKLOG = SUBSCRIPTIONS * NOTIFICATIONS;
const AN_HOUR_MS = 3_600_000;
/** Each transaction's wait before it commits. */
const COMMIT_MS = 50;
/** The receiver's waits before it answers, in turn: longer than a claim, apart by less than a commit's wait. */
const ANSWER_MS = [120, 140];

async function notify(app: FastifyInstance, token: string): Promise<void> {
  const sent = await webhookRequest(app, { token }, 'POST', '/v1/webhooks/mock/send-payment-notification');
  assert.equal(sent.statusCode, 202, sent.body);
}

/** An app without a delivery worker, Alpha's 20 subscriptions and Alpha's backlog, and a worker of the test's. */
async function setup(t: TestContext) {
  assert.equal(perCustomerCap(CONCURRENCY), 2);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  let answered = 0;
  receiver.respond((_request, response) =>
    setTimeout(() => response.writeHead(204).end(), ANSWER_MS[answered++ % ANSWER_MS.length]),
  );
  const policy = { allowHttp: true, allowedHosts: [receiver.host] };
  const { app, world, token } = await customerSession(h, {
    webhookAllowHttp: policy.allowHttp,
    webhookAllowedHosts: policy.allowedHosts,
  });
  for (let i = 0; i < SUBSCRIPTIONS; i++) await subscribe(app, { token }, `${receiver.url}/${i}`, ['WEBHOOK_TEST']);
  for (let i = 0; i < NOTIFICATIONS; i++) await notify(app, token);

  const database = h.db.current.database;
  const { uow } = createDataLayer(database, createSealedValues(keyRingOf(app.config), SILENT_LOG));
  // Commits as slow as that machine's: each transaction holds its work's result a while before it commits.
  const slowCommits: typeof uow = {
    snapshot: (work) => uow.snapshot(work),
    write: (context, work) =>
      uow.write(context, async (scope) => {
        const result = await work(scope);
        await sleep(COMMIT_MS);
        return result;
      }),
  };
  const delivery = createWebhookDelivery({
    uow: slowCommits,
    sender: createWebhookSender({ policy, timeoutMs: 10_000 }),
    listen: (channel, onMessage) => database.listen(channel, { onMessage }),
    retrySchedule: [AN_HOUR_MS],
    timeoutMs: 10_000,
    concurrency: CONCURRENCY,
    log: SILENT_LOG,
    pollIntervalMs: AN_HOUR_MS,
  });
  const succeeded = async () =>
    (
      await database.db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.status, 'SUCCEEDED'))
    )[0]!.n;
  return { app, world, receiver, delivery, succeeded };
}

/** Waits (far longer than the deliveries take: not a time limit) for `n` receipts and their outcomes written. */
async function allDelivered(receiver: Receiver, succeeded: () => Promise<number>, n: number) {
  await receiver.waitFor(n, 60_000);
  await waitFor(async () => (await succeeded()) === n, 'every outcome written');
  assert.equal(receiver.received.length, n, 'each once');
}

describe('webhook claims follow each other', () => {
  it('delivers every due delivery of a customer held at its cap without the poll', async (t) => {
    const { receiver, delivery, succeeded } = await setup(t);
    await delivery.start();
    try {
      await allDelivered(receiver, succeeded, BACKLOG);
    } finally {
      await delivery.stop();
    }
  });

  it("finds another customer's delivery behind a backlog that fills the scan, before the backlog is done", async (t) => {
    const { app, world, receiver, delivery, succeeded } = await setup(t);
    const beta = (await loginAs(app, world.otherLogin)).access_token;
    await subscribe(app, { token: beta }, `${receiver.url}/beta`, ['WEBHOOK_TEST']);
    await delivery.start();
    try {
      // Alpha's backlog is under way, a customer's two slots busy in turns, when Beta's event comes.
      await receiver.waitFor(SUBSCRIPTIONS / 2, 60_000);
      await notify(app, beta);
      await allDelivered(receiver, succeeded, BACKLOG + 1);
    } finally {
      await delivery.stop();
    }
    const betaAt = receiver.received.findIndex((request) => request.path.endsWith('/beta'));
    // Within a few of Alpha's turns, not after its backlog has drained.
    assert.ok(
      betaAt >= SUBSCRIPTIONS / 2 && betaAt < BACKLOG - SUBSCRIPTIONS / 2,
      `received ${betaAt + 1}th of ${BACKLOG + 1}`,
    );
  });
});
