/** Webhook delivery targets checked again at every attempt, with name resolution stubbed: private addresses refused before any connection. */
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { afterEach, describe, it, mock } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { deliveringTo, oneDelivery, subscribe, useDeliveryHarness } from '../helpers/webhooks.js';

const h = useTestApp();
const { receiver, restart } = useDeliveryHarness(h);
afterEach(() => mock.restoreAll());

describe('webhook delivery targets', () => {
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
});
