/** Webhook delivery that fails: retries, the attempt timeout, redirects, subscriptions disabled after 5 days, retry by hand, restarts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import { testConfig } from '../../src/config.js';
import { auditEvents, webhookDeliveries, webhookSubscriptions } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import {
  deliveries,
  deliveringTo,
  oneDelivery,
  subscribe,
  useDeliveryHarness,
  webhookRequest,
} from '../helpers/webhooks.js';

const h = useTestApp();
const { receiver, restart } = useDeliveryHarness(h);

/** As if every delivery of the subscription had failed for `interval` (PostgreSQL interval text). */
async function failingFor(hook: string, interval: string): Promise<void> {
  await h.db.current.database.db
    .update(webhookSubscriptions)
    .set({ failingSince: sql`now() - ${interval}::interval` })
    .where(eq(webhookSubscriptions.id, hook));
}

describe('webhook delivery retries', () => {
  it('retries a receiver that answers 500, then 200: delivered once, same webhook-id', async () => {
    const r = await receiver();
    r.respond((_got, response) => response.writeHead(r.received.length === 1 ? 500 : 200).end());
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    const hook = await subscribe(app, { token }, r.url);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await r.waitFor(2);
    assert.equal(r.received[0]!.headers['webhook-id'], r.received[1]!.headers['webhook-id']);
    const done = await oneDelivery(app, token, hook, 'SUCCEEDED');
    assert.equal(done.attempts, 2);
    assert.equal(done.last_status_code, 200);
    await sleep(400);
    assert.equal(r.received.length, 2, 'not sent again once it succeeded');
  });

  it('cuts a receiver that does not answer at the timeout, and marks the delivery FAILED after the last retry', async () => {
    const r = await receiver();
    r.respond(() => {}); // never answers
    const { app, world, token } = await customerSession(
      h,
      deliveringTo(r, { webhookTimeoutSeconds: 1, webhookRetrySchedule: [50] }),
    );
    const hook = await subscribe(app, { token }, r.url);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const failed = await oneDelivery(app, token, hook, 'FAILED');
    assert.equal(failed.attempts, 2);
    assert.equal(failed.last_status_code, null);
    assert.equal(failed.last_error, 'no answer within 1 s');
    assert.equal(failed.next_attempt_at, null);
    assert.equal(testConfig().webhookTimeoutSeconds, 10, 'cut at 10 s unless WEBHOOK_TIMEOUT_SECONDS says otherwise');
    const gap = r.received[1]!.at - r.received[0]!.at;
    // The clock starts before the request is sent, so its receipt may come a little after.
    assert.ok(gap >= 900 && gap < 3000, `the first attempt was cut after about 1 s (${gap} ms)`);
  });

  it('does not follow a redirect (to the metadata address here): the attempt fails with its status', async () => {
    const r = await receiver();
    r.respond((_got, response) =>
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end(),
    );
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookRetrySchedule: [] }));
    const hook = await subscribe(app, { token }, r.url);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const failed = await oneDelivery(app, token, hook, 'FAILED');
    assert.equal(failed.last_status_code, 302);
    assert.equal(failed.last_error, 'redirect (302) not followed');
    assert.equal(r.received.length, 1);
  });

  it('lists deliveries by status, retries one now (202, same webhook-id), and drops pending ones with the subscription', async () => {
    const r = await receiver();
    r.respond((_got, response) => response.writeHead(500).end());
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookRetrySchedule: [] }));
    const hook = await subscribe(app, { token }, r.url);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const failed = await oneDelivery(app, token, hook, 'FAILED');
    assert.equal(failed.last_status_code, 500);
    assert.equal((await deliveries(app, token, hook, '?status=SUCCEEDED')).length, 0);
    assert.equal((await deliveries(app, token, hook, '?status=FAILED')).length, 1);
    assert.equal(
      (await webhookRequest(app, { token }, 'GET', `/v1/webhooks/${hook}/deliveries?status=LOST`)).statusCode,
      400,
    );

    r.respond((_got, response) => response.writeHead(200).end());
    const retried = await webhookRequest(app, { token }, 'POST', `/v1/webhooks/${hook}/deliveries/${failed.id}/retry`);
    assert.equal(retried.statusCode, 202);
    assert.equal(json(retried).status, 'PENDING');
    await r.waitFor(2);
    assert.equal(r.received[1]!.headers['webhook-id'], failed.event_id);
    const done = await oneDelivery(app, token, hook, 'SUCCEEDED');
    assert.equal(done.attempts, 2);
    const unknown = await webhookRequest(
      app,
      { token },
      'POST',
      `/v1/webhooks/${hook}/deliveries/${world.customerId}/retry`,
    );
    assert.equal(unknown.statusCode, 404);
    assert.equal(json(unknown).code, 'webhook_delivery_not_found');

    assert.equal((await webhookRequest(app, { token }, 'DELETE', `/v1/webhooks/${hook}`)).statusCode, 204);
    const left = await h.db.current.database.db.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries`);
    assert.equal((left as unknown as { rows: Array<{ n: number }> }).rows[0]!.n, 0);
  });
});

describe('failing webhook subscriptions', () => {
  it('disables a subscription whose deliveries have all failed for 5 days (audit webhook.disabled), failing what is pending', async () => {
    const r = await receiver();
    r.respond((_got, response) => response.writeHead(503).end());
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookRetrySchedule: [60_000] }));
    const hook = await subscribe(app, { token }, r.url);
    await failingFor(hook, '5 days 1 minute');
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await waitFor(
      async () => json(await webhookRequest(app, { token }, 'GET', `/v1/webhooks/${hook}`)).status === 'DISABLED',
      'disabled',
    );
    const [failed] = await deliveries(app, token, hook);
    assert.equal(failed!.status, 'FAILED');
    assert.equal(failed!.last_error, 'the subscription was disabled');
    const trail = await h.db.current.database.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'webhook.disabled'));
    assert.equal(trail.length, 1);
    assert.deepEqual(
      [trail[0]!.targetId, trail[0]!.customerId, trail[0]!.actorType],
      [hook, world.customerId, 'system'],
    );
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await sleep(300);
    assert.equal(r.received.length, 1, 'nothing is sent to a DISABLED subscription');
  });

  it('a recent success keeps a failing subscription enabled', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    const hook = await subscribe(app, { token }, r.url);
    await failingFor(hook, '6 days');
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await oneDelivery(app, token, hook, 'SUCCEEDED');
    const [row] = await h.db.current.database.db
      .select()
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.id, hook));
    assert.deepEqual([row!.status, row!.failingSince], ['ENABLED', null]);
  });
});

describe('webhook delivery across restarts', () => {
  it('delivers after a restart what it could not deliver while the receiver was down', async () => {
    const r = await receiver();
    const port = r.port;
    const { app, world, token } = await customerSession(
      h,
      deliveringTo(r, { webhookRetrySchedule: [100, 100, 100, 100, 100] }),
    );
    const hook = await subscribe(app, { token }, r.url);
    await r.close();
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await waitFor(async () => (await deliveries(app, token, hook))[0]?.last_error != null, 'attempted while down');
    assert.match((await deliveries(app, token, hook))[0]!.last_error, /ECONNREFUSED/);
    await app.close();
    const back = await receiver(port);
    const again = await restart(deliveringTo(back, { webhookRetrySchedule: [100, 100, 100, 100, 100] }));
    await back.waitFor(1, 5000);
    const done = await oneDelivery(again, token, hook, 'SUCCEEDED');
    assert.ok(done.attempts >= 2);
  });

  it('cuts short an attempt under way when the instance stops; the next instance attempts it again at once', async () => {
    const r = await receiver();
    r.respond((_got, response) => {
      if (r.received.length > 1) response.writeHead(204).end(); // the first request hangs
    });
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookTimeoutSeconds: 60 }));
    const hook = await subscribe(app, { token }, r.url);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await r.waitFor(1);
    const stopped = await Promise.race([app.close().then(() => 'stopped'), sleep(10_000).then(() => 'waiting')]);
    assert.equal(stopped, 'stopped', 'stopping does not wait for the attempt’s 60 s timeout');
    const [cut] = await h.db.current.database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.subscriptionId, hook));
    assert.equal(cut!.status, 'PENDING');
    assert.equal(cut!.lastError, 'interrupted: the instance stopped');
    assert.equal(cut!.claimedUntil, null, 'its lease given back, not left to expire');
    const again = await restart(deliveringTo(r));
    const done = await oneDelivery(again, token, hook, 'SUCCEEDED');
    assert.equal(done.attempts, 2);
    assert.equal(r.received.length, 2);
  });
});
