/**
 * Webhook delivery, end to end: a change commits, its event is fanned out and
 * POSTed to a real HTTP receiver on 127.0.0.1 that the test starts (allowed by
 * WEBHOOK_ALLOWED_HOSTS), signed as Standard Webhooks says (checked with the
 * standardwebhooks package's verifier), retried, failed, disabled; refused
 * targets are refused before any connection, with name resolution stubbed.
 */
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { afterEach, describe, it, mock } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { createDataLayer } from '../../src/data-layer.js';
import { auditEvents, webhookDeliveries, webhookSubscriptions } from '../../src/db/schema.js';
import { registry } from '../../src/lib/metrics.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { testSealedValues } from '../helpers/secrets.js';
import { createKey, updateKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { deliveringTo, type Receiver, SECRET, startReceiver, subscribe, webhookRequest } from '../helpers/webhooks.js';

const h = useTestApp();
let receivers: Receiver[] = [];
let restarted: FastifyInstance[] = [];
/** Another start of the service on the test's database (the harness keeps its first app). */
async function restart(overrides: Partial<Config>): Promise<FastifyInstance> {
  const app = await buildApp({ config: testConfig(overrides), database: h.db.current.database });
  await app.ready();
  restarted.push(app);
  return app;
}
async function receiver(port?: number): Promise<Receiver> {
  const started = await startReceiver(port);
  receivers.push(started);
  return started;
}
afterEach(async () => {
  mock.restoreAll();
  await Promise.all(restarted.map((app) => app.close()));
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
  restarted = [];
});

async function deliveries(app: Awaited<ReturnType<typeof h.app>>, token: string, hook: string, query = '') {
  return json(await webhookRequest(app, { token }, 'GET', `/v1/webhooks/${hook}/deliveries${query}`)).data as Array<
    Record<string, any>
  >;
}

/** As if every delivery of the subscription had failed for `interval` (PostgreSQL interval text). */
async function failingFor(hook: string, interval: string): Promise<void> {
  await h.db.current.database.db
    .update(webhookSubscriptions)
    .set({ failingSince: sql`now() - ${interval}::interval` })
    .where(eq(webhookSubscriptions.id, hook));
}

async function oneDelivery(app: Awaited<ReturnType<typeof h.app>>, token: string, hook: string, status: string) {
  let found: Record<string, any> | undefined;
  await waitFor(
    async () => {
      found = (await deliveries(app, token, hook)).find((d) => d.status === status);
      return found !== undefined;
    },
    `a ${status} delivery`,
    { timeoutMs: 8000 },
  );
  return found!;
}

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

  it('refuses, without connecting, a host name that resolves to a private address, at every attempt', async () => {
    const r = await receiver();
    const lookups: string[] = [];
    mock.method(dns.promises, 'lookup', async (host: string) => {
      lookups.push(host);
      return [{ address: '10.0.0.1', family: 4 }];
    });
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookRetrySchedule: [50] }));
    const hook = await subscribe(app, { token }, 'http://rebinding.example/hook');
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const failed = await oneDelivery(app, token, hook, 'FAILED');
    assert.equal(failed.attempts, 2);
    assert.equal(
      failed.last_error,
      'refused: the URL host rebinding.example resolves to a non-public address (10.0.0.1)',
    );
    assert.deepEqual(lookups, ['rebinding.example', 'rebinding.example'], 'resolved again at every attempt');
  });

  it('connects to the address it resolved and checked (an allowed name, resolved by a stub to the receiver)', async () => {
    const r = await receiver();
    mock.method(dns.promises, 'lookup', async () => [{ address: '127.0.0.1', family: 4 }]);
    const { app, world, token } = await customerSession(
      h,
      deliveringTo(r, { webhookAllowedHosts: [`receiver.test:${r.port}`] }),
    );
    await subscribe(app, { token }, `http://receiver.test:${r.port}/hooks`);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const [got] = await r.waitFor(1);
    assert.equal(got!.headers.host, `receiver.test:${r.port}`);
  });

  it('refuses a subscription whose URL became private at delivery: 127.0.0.1 not in WEBHOOK_ALLOWED_HOSTS', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookRetrySchedule: [] }));
    const hook = await subscribe(app, { token }, r.url);
    // The operator takes the exception away after the subscription was made.
    await app.close();
    const later = await restart(deliveringTo(r, { webhookAllowedHosts: [], webhookRetrySchedule: [] }));
    await createKey(later, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const failed = await oneDelivery(later, token, hook, 'FAILED');
    assert.match(failed.last_error, /^refused: the URL names a private, loopback or otherwise non-public address/);
    assert.equal(r.received.length, 0);
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

  it('delivers 50 events made in parallel, each once', async () => {
    const r = await receiver();
    // The longest attempt timeout: on a loaded machine an attempt that times out is retried, which is at
    // least once by design; this test is about two claims of one delivery, not about slow answers.
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookTimeoutSeconds: 30 }));
    await subscribe(app, { token }, r.url);
    // Ten at a time, a user each: fifty at once answered 503 on a loaded CI machine; this test is about
    // deliveries of events made in parallel, not about how many writes the service takes at once.
    const created = [];
    for (let batch = 0; batch < 5; batch++)
      created.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            createKey(app, { token }, { user: `ci${batch * 10 + i}@alpha.test`, customer_id: world.customerId }),
          ),
        )),
      );
    assert.deepEqual(
      created.map((c) => c.statusCode).filter((status) => status !== 201),
      [],
      'every key created',
    );
    await r.waitFor(50);
    await sleep(300);
    const ids = r.received.map((got) => got.headers['webhook-id']);
    assert.equal(new Set(ids).size, 50);
    assert.equal(ids.length, 50, `delivered twice: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);
  });

  /** `events` events for a receiver that holds its answers (`held` sends them), on an instance with `concurrency` slots. */
  async function heldDeliveries(concurrency: number, events: number) {
    const r = await receiver();
    const held: Array<() => void> = [];
    r.respond((_got, response) => held.push(() => response.writeHead(204).end()));
    const { app, world, token } = await customerSession(h, deliveringTo(r, { webhookConcurrency: concurrency }));
    await subscribe(app, { token }, r.url);
    for (let i = 0; i < events; i++)
      await createKey(app, { token }, { user: `ci${i % 4}@alpha.test`, customer_id: world.customerId });
    return { r, held };
  }

  it('has at most half of WEBHOOK_CONCURRENCY attempts of one customer in flight; the others wait for a free slot', async () => {
    const { r, held } = await heldDeliveries(6, 8);
    await r.waitFor(3);
    await sleep(500);
    assert.equal(r.received.length, 3, 'three attempts under way (half of 6), five waiting');
    r.respond((_got, response) => response.writeHead(204).end());
    for (const answer of held.splice(0)) answer();
    await r.waitFor(8);
    await sleep(300);
    assert.equal(new Set(r.received.map((got) => got.headers['webhook-id'])).size, 8);
    assert.equal(r.received.length, 8, 'each delivered once');
  });

  it('has more than ten attempts in flight without a warning of leaking abort listeners', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const { r, held } = await heldDeliveries(24, 12);
      await r.waitFor(12);
      await sleep(100);
      for (const answer of held.splice(0)) answer();
      assert.deepEqual(
        warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
        [],
        'twelve attempts each listen for the stop',
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('with two instances, attempts each delivery on one of them only', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    const other = await secondInstance(h, deliveringTo(r));
    try {
      await subscribe(app, { token }, r.url);
      // A user each, as above.
      const created = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          createKey(i % 2 ? other : app, { token }, { user: `ci${i}@alpha.test`, customer_id: world.customerId }),
        ),
      );
      assert.deepEqual(
        created.map((c) => c.statusCode).filter((status) => status !== 201),
        [],
        'every key created',
      );
      await r.waitFor(40);
      await sleep(500);
      assert.equal(new Set(r.received.map((got) => got.headers['webhook-id'])).size, 40);
      assert.equal(r.received.length, 40);
    } finally {
      await other.close();
    }
  });

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
