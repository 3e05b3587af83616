/** Webhook delivery of many events at once: each delivered once, per-customer slots, and two instances sharing the work. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { secondInstance, useTestApp } from '../helpers/app.js';
import { createKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { deliveringTo, type Received, subscribe, useDeliveryHarness } from '../helpers/webhooks.js';

const h = useTestApp();
const { receiver } = useDeliveryHarness(h);

/** Names each event received again and how long after its first arrival (a retry after a timeout comes at least that long after). */
function deliveredTwice(received: Received[]): string {
  const first = new Map<unknown, number>();
  const repeats: string[] = [];
  for (const got of received) {
    const id = got.headers['webhook-id'];
    const at = first.get(id);
    if (at === undefined) first.set(id, got.at);
    else repeats.push(`${id} again after ${got.at - at} ms`);
  }
  return `delivered twice: ${repeats.join(', ')}`;
}

describe('concurrent webhook delivery', () => {
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
    assert.equal(ids.length, 50, deliveredTwice(r.received));
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
    // The longest attempt timeout, as above: an attempt timed out on a loaded machine is retried by design.
    const settings = deliveringTo(r, { webhookTimeoutSeconds: 30 });
    const { app, world, token } = await customerSession(h, settings);
    const other = await secondInstance(h, settings);
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
      assert.equal(r.received.length, 40, deliveredTwice(r.received));
    } finally {
      await other.close();
    }
  });
});
