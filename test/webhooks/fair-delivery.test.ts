/**
 * Fair webhooks (contract section 19): one customer's dead receivers never
 * delay another customer's deliveries. A customer holds at most half of
 * WEBHOOK_CONCURRENCY in flight; with its 20 subscriptions pointing at a
 * receiver that accepts connections and never answers, and 200 events queued
 * for it, another customer's test event is received within 2 s, and its
 * retry is not queued behind them. Both receivers are on 127.0.0.1, started
 * here.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { count, eq } from 'drizzle-orm';
import { webhookDeliveries, webhookSubscriptions } from '../../src/db/schema.js';
import { useTestApp } from '../helpers/app.js';
import { customerSession, loginAs } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { type Receiver, startReceiver, subscribe, webhookRequest } from '../helpers/webhooks.js';

const h = useTestApp();
const CONCURRENCY = 8;
/** Long past the test: an attempt to the dead receiver holds its slot throughout. */
const TIMEOUT_SECONDS = 30;

/** A receiver on 127.0.0.1 that accepts every connection and never says anything; counts them. */
async function deadReceiver() {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/hooks`,
    accepted: () => accepted,
    open: () => sockets.size,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('fair webhook delivery', () => {
  let live: Receiver | undefined;
  let dead: Awaited<ReturnType<typeof deadReceiver>> | undefined;

  it("delivers another customer's test event within 2 s while one customer's 200 events wait on a dead receiver", async (t) => {
    dead = await deadReceiver();
    live = await startReceiver();
    t.after(async () => {
      await live?.close();
      await dead?.close();
    });
    const { app, world, token } = await customerSession(h, {
      webhookWorker: true,
      webhookAllowHttp: true,
      webhookAllowedHosts: [dead.host, live.host],
      webhookConcurrency: CONCURRENCY,
      webhookTimeoutSeconds: TIMEOUT_SECONDS,
      webhookRetrySchedule: [200],
    });
    for (let i = 0; i < 20; i++) await subscribe(app, { token }, `${dead.url}/${i}`, ['WEBHOOK_TEST']);
    // Ten mock payment notifications (the most a minute allows): an event to each of the 20 subscriptions each.
    for (let i = 0; i < 10; i++) {
      const sent = await webhookRequest(app, { token }, 'POST', '/v1/webhooks/mock/send-payment-notification');
      assert.equal(sent.statusCode, 202, sent.body);
    }
    const queued = async () =>
      (
        await h.db.current.database.db
          .select({ n: count() })
          .from(webhookDeliveries)
          .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
          .where(eq(webhookSubscriptions.customerId, world.customerId))
      )[0]!.n;
    await waitFor(async () => (await queued()) === 200, '200 deliveries queued for the dead receiver');
    await waitFor(() => dead!.open() >= CONCURRENCY / 2, 'the customer holds (at least) its half of the slots');

    // The other customer's receiver fails the first attempt: its retry then waits in the queue behind the 196
    // deliveries of the first customer that are due, and must be claimed past them.
    live.respond((got, response) => response.writeHead(live!.received.indexOf(got) === 0 ? 500 : 204).end());
    const other = (await loginAs(app, world.otherLogin)).access_token;
    const theirs = await subscribe(app, { token: other }, live.url, ['WEBHOOK_TEST']);
    const test = await webhookRequest(app, { token: other }, 'POST', `/v1/webhooks/${theirs}/test`);
    assert.equal(test.statusCode, 202, test.body);
    // The contract's bound, as a deadline: the event arrives well within it unless the dead receiver's attempts hold every slot.
    await live.waitFor(1, 2000);
    assert.equal(JSON.parse(live.received[0]!.body).customer_id, world.otherCustomerId);
    // Its retry is due after about 200 ms and found by the next claim, the poll's at the latest (every second).
    await live.waitFor(2, 3000);
    assert.equal(live.received[1]!.headers['webhook-id'], live.received[0]!.headers['webhook-id']);

    assert.equal(dead.accepted(), CONCURRENCY / 2, 'the first customer never had more than half of the slots');
  });
});
