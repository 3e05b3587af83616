/** Webhook delivery to a real receiver on 127.0.0.1: the event POSTed once committed, signed as Standard Webhooks says, test sends, metrics. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { createDataLayer } from '../../src/data-layer.js';
import { webhookSubscriptions } from '../../src/db/schema.js';
import { registry } from '../../src/lib/metrics.js';
import { json, useTestApp } from '../helpers/app.js';
import { testSealedValues } from '../helpers/secrets.js';
import { createKey, updateKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import {
  deliveries,
  deliveringTo,
  SECRET,
  subscribe,
  useDeliveryHarness,
  webhookRequest,
} from '../helpers/webhooks.js';

const h = useTestApp();
const { receiver } = useDeliveryHarness(h);

describe('webhook delivery', () => {
  it('POSTs the event within 1 s of the commit, signed (verified by standardwebhooks), the key masked', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    const hook = await subscribe(app, { token }, r.url);
    const created = await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const committedAt = Date.now();
    const [got] = await r.waitFor(1);
    assert.ok(got!.at - committedAt < 1000, `delivered ${got!.at - committedAt} ms after the commit`);
    assert.equal(got!.headers['content-type'], 'application/json');
    const event = new Webhook(Buffer.from(SECRET, 'utf8'), { format: 'raw' }).verify(
      got!.body,
      got!.headers as never,
    ) as any;
    assert.equal(got!.headers['webhook-id'], event.id);
    assert.ok(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000) < 5);
    assert.deepEqual(Object.keys(event).sort(), ['created', 'customer_id', 'data', 'id', 'request_id', 'type']);
    assert.equal(event.type, 'API_KEY_CREATED');
    assert.equal(event.customer_id, world.customerId);
    assert.equal(event.request_id, created.headers['x-request-id']);
    assert.equal(event.data.id, json(created).id);
    assert.match(event.data.api_key, /\*{4}/);
    assert.ok(!got!.body.includes(json(created).api_key), 'never the key itself');
    assert.throws(() =>
      new Webhook(Buffer.from('Other#Secret1'), { format: 'raw' }).verify(got!.body, got!.headers as never),
    );
    const [delivery] = await deliveries(app, token, hook);
    await waitFor(async () => (await deliveries(app, token, hook))[0]?.status === 'SUCCEEDED', 'recorded as SUCCEEDED');
    assert.equal(delivery!.event_id, event.id);
  });

  it('sends only the subscribed types, and only to the subscriptions of the event’s customer', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    await subscribe(app, { token }, r.url, ['API_KEY_REVOKED']);
    const key = json(await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId }));
    await webhookRequest(app, { token }, 'DELETE', `/v1/api-keys/${key.id}`);
    const [got] = await r.waitFor(1);
    assert.equal(JSON.parse(got!.body).type, 'API_KEY_REVOKED');
    await sleep(300);
    assert.equal(r.received.length, 1, 'API_KEY_CREATED was not subscribed');
  });

  it('writes no event, and sends nothing, for a change that rolled back', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    const hook = await subscribe(app, { token }, r.url, ['API_KEY_CREATED', 'WEBHOOK_TEST']);
    const { uow } = createDataLayer(h.db.current.database, testSealedValues());
    await assert.rejects(
      uow.write({ requestId: 'rolled-back', actor: { type: 'operator', id: null } }, async ({ emit }) => {
        await emit({
          type: 'WEBHOOK_TEST',
          customerId: world.customerId,
          data: { webhook_id: hook, message: 'never' },
        });
        throw new Error('the change fails after its event');
      }),
    );
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await r.waitFor(1);
    await sleep(300);
    assert.equal(r.received.length, 1);
    assert.notEqual(JSON.parse(r.received[0]!.body).request_id, 'rolled-back');
  });

  it('signs with the old and the new secret for a day after the secret changed', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    const hook = await subscribe(app, { token }, r.url);
    const next = 'Next!Secret-2027';
    assert.equal(
      (await webhookRequest(app, { token }, 'PATCH', `/v1/webhooks/${hook}`, { secret_key: next })).statusCode,
      200,
    );
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const [got] = await r.waitFor(1);
    assert.equal(String(got!.headers['webhook-signature']).split(' ').length, 2);
    for (const secret of [SECRET, next])
      new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(got!.body, got!.headers as never);
    await h.db.current.database.db
      .update(webhookSubscriptions)
      .set({ previousSecretExpiresAt: sql`now() - interval '1 second'` })
      .where(eq(webhookSubscriptions.id, hook));
    const key = json(await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId }));
    await updateKey(app, { token }, key.id, { name: 'after the overlap' });
    const [, , last] = await r.waitFor(3);
    assert.equal(String(last!.headers['webhook-signature']).split(' ').length, 1, 'the old secret no longer signs');
    new Webhook(Buffer.from(next, 'utf8'), { format: 'raw' }).verify(last!.body, last!.headers as never);
  });

  it('sends a test event to one subscription, whatever its types; the mock notification to every ENABLED one', async () => {
    const r = await receiver();
    const { app, token } = await customerSession(h, deliveringTo(r));
    const first = await subscribe(app, { token }, `${r.url}/first`, ['FEE_RULES_ASSIGNED']);
    const second = await subscribe(app, { token }, `${r.url}/second`, ['API_KEY_CREATED']);
    const disabled = await subscribe(app, { token }, `${r.url}/disabled`, ['API_KEY_CREATED']);
    await webhookRequest(app, { token }, 'PATCH', `/v1/webhooks/${disabled}`, { status: 'DISABLED' });
    const test = await webhookRequest(app, { token }, 'POST', `/v1/webhooks/${first}/test`);
    assert.equal(test.statusCode, 202);
    const [got] = await r.waitFor(1);
    assert.equal(got!.path, '/hooks/first');
    const event = JSON.parse(got!.body);
    assert.deepEqual([event.type, event.id, event.data.webhook_id], ['WEBHOOK_TEST', json(test).event_ids[0], first]);

    const mockSent = await webhookRequest(app, { token }, 'POST', '/v1/webhooks/mock/send-payment-notification');
    assert.equal(mockSent.statusCode, 202);
    assert.equal(json(mockSent).event_ids.length, 2);
    await r.waitFor(3);
    await sleep(300);
    const mocked = r.received.slice(1).map((g) => ({ path: g.path, event: JSON.parse(g.body) }));
    assert.deepEqual(mocked.map((m) => m.path).sort(), ['/hooks/first', '/hooks/second']);
    // The ids answered are the events written, one statement for both (emitAll), each to its own subscription.
    assert.deepEqual(mocked.map((m) => m.event.id).sort(), [...json(mockSent).event_ids].sort());
    for (const m of mocked) assert.equal(m.event.data.webhook_id, m.path === '/hooks/first' ? first : second);
    assert.equal((await deliveries(app, token, second))[0]!.event_type, 'WEBHOOK_TEST');
  });

  it('counts attempts by outcome and their duration, and reports the queue', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    await subscribe(app, { token }, r.url);
    const succeeded = async () =>
      (await registry.getSingleMetric('feegate_webhook_attempts_total')!.get()).values.find(
        (v) => v.labels.outcome === 'succeeded',
      )?.value ?? 0;
    const before = await succeeded();
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await r.waitFor(1);
    await waitFor(async () => {
      return (await succeeded()) === before + 1;
    }, 'one more success counted');
    const text = await registry.metrics();
    assert.match(text, /feegate_webhook_attempt_duration_seconds_count \d+/);
    assert.match(text, /feegate_webhook_queue_depth \d+/);
    assert.match(text, /feegate_webhook_oldest_pending_age_seconds [\d.]+/);
  });
});
