/**
 * The claimer claims again on its own while due deliveries are left, never
 * waiting for its poll. A claim counts a customer's attempts in flight as it
 * begins and holds back what would pass the customer's cap by that count; the
 * attempts that end while it runs (a receiver on loopback answers sooner than
 * a claim commits) free room it cannot see. That room must start a new claim,
 * or the customer's deliveries wait for the next poll: on a machine whose
 * commits took 100 ms, a burst of 10,000 went at about 300 a second.
 *
 * Here the poll never comes (an hour), so every delivery arrives only if each
 * claim leads to the next; every transaction waits 50 ms before it commits,
 * and the receiver 120 ms before it answers, which makes that race happen on
 * every turn. The delivery worker is built on the test's database beside an
 * app that has none of its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { count, eq } from 'drizzle-orm';
import { keyRingOf } from '../../src/config.js';
import { createDataLayer } from '../../src/data-layer.js';
import { webhookDeliveries } from '../../src/db/schema.js';
import { createWebhookDelivery, perCustomerCap } from '../../src/features/webhooks/webhook-delivery.js';
import { createWebhookSender } from '../../src/features/webhooks/webhook-sender.js';
import { SILENT_LOG } from '../../src/lib/log.js';
import { createSealedValues } from '../../src/lib/sealed-values.js';
import { useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { startReceiver, subscribe, webhookRequest } from '../helpers/webhooks.js';

const h = useTestApp();
/** A cap of two a customer: many claims, each racing the attempts it follows. */
const CONCURRENCY = 4;
const SUBSCRIPTIONS = 20;
/** Mock notifications: an event to every subscription each. */
const NOTIFICATIONS = 2;
const AN_HOUR_MS = 3_600_000;
/** Each transaction's wait before it commits. */
const COMMIT_MS = 50;
/**
 * The receiver's wait before it answers: longer than a claim, so a customer's
 * two attempts are both in flight when the claim after theirs ends, and they
 * end together, the second while the claim the first woke is running.
 */
const ANSWER_MS = 120;

describe('webhook claims follow each other', () => {
  it('delivers every due delivery of a customer held at its cap without the poll', async (t) => {
    assert.equal(perCustomerCap(CONCURRENCY), 2);
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    receiver.respond((_request, response) => setTimeout(() => response.writeHead(204).end(), ANSWER_MS));
    const policy = { allowHttp: true, allowedHosts: [receiver.host] };
    const { app, token } = await customerSession(h, {
      webhookAllowHttp: policy.allowHttp,
      webhookAllowedHosts: policy.allowedHosts,
    });
    for (let i = 0; i < SUBSCRIPTIONS; i++) await subscribe(app, { token }, `${receiver.url}/${i}`, ['WEBHOOK_TEST']);
    for (let i = 0; i < NOTIFICATIONS; i++) {
      const sent = await webhookRequest(app, { token }, 'POST', '/v1/webhooks/mock/send-payment-notification');
      assert.equal(sent.statusCode, 202, sent.body);
    }

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
        await database.db
          .select({ n: count() })
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.status, 'SUCCEEDED'))
      )[0]!.n;
    await delivery.start();
    try {
      // Far longer than the deliveries take: a wait, not a time limit.
      await receiver.waitFor(SUBSCRIPTIONS * NOTIFICATIONS, 60_000);
      await waitFor(async () => (await succeeded()) === SUBSCRIPTIONS * NOTIFICATIONS, 'every outcome written');
    } finally {
      await delivery.stop();
    }
    assert.equal(receiver.received.length, SUBSCRIPTIONS * NOTIFICATIONS, 'each once');
  });
});
