/**
 * AUDIT_RECORD (contract section 25): each record of the customer's audit trail,
 * delivered and signed like every event, to the subscriptions that list the type
 * only, never carrying a secret.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { domainEvents } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { deliveringTo, type Receiver, SECRET, startReceiver, subscribe } from '../helpers/webhooks.js';

const h = useTestApp();
let receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});
async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

const auditRecordsIn = (r: Receiver) =>
  r.received.map((got) => JSON.parse(got.body)).filter((event) => event.type === 'AUDIT_RECORD');

describe('AUDIT_RECORD events', () => {
  it('delivers each record, signed, as GET /v1/audit-events lists it, without the key or the webhook secret', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    await subscribe(app, { token }, r.url, ['AUDIT_RECORD']);
    const created = await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    assert.equal(created.statusCode, 201, created.body);
    const received = await r.waitFor(2);
    const events = received.map((got) => ({
      got,
      event: new Webhook(Buffer.from(SECRET, 'utf8'), { format: 'raw' }).verify(got.body, got.headers as never) as any,
    }));
    const keyEvent = events.find(({ event }) => event.data.action === 'api_key.created');
    assert.ok(keyEvent, 'the key creation is delivered');
    assert.equal(keyEvent.event.type, 'AUDIT_RECORD');
    assert.equal(keyEvent.event.customer_id, world.customerId);
    assert.equal(keyEvent.event.request_id, created.headers['x-request-id']);
    const listed = json(
      await app.inject({
        method: 'GET',
        url: '/v1/audit-events?action=api_key.created',
        headers: { authorization: `Bearer ${token}` },
      }),
    ).data[0];
    assert.deepEqual(keyEvent.event.data, listed);
    for (const { got } of events) {
      assert.ok(!got.body.includes(json(created).api_key), 'never the key itself');
      assert.ok(!got.body.includes(SECRET), 'never the webhook secret');
    }
  });

  it('delivers a login and a failed login as their records, as GET /v1/audit-events lists them', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    await subscribe(app, { token }, r.url, ['AUDIT_RECORD']);
    const login = await app.inject({ method: 'POST', url: '/v1/login', payload: world.login });
    assert.equal(login.statusCode, 200, login.body);
    const wrong = await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: world.login.user, password: 'not-the-password' },
    });
    assert.equal(wrong.statusCode, 401);
    const actions = ['auth.login', 'auth.login_failed'];
    await waitFor(
      () => actions.every((action) => auditRecordsIn(r).some((e) => e.data.action === action)),
      'both records delivered',
    );
    const records = auditRecordsIn(r);
    const listed = json(
      await app.inject({ method: 'GET', url: '/v1/audit-events', headers: { authorization: `Bearer ${token}` } }),
    ).data as Array<{ id: string; action: string }>;
    for (const action of actions) {
      const event = records.find((e) => e.data.action === action);
      assert.ok(event, `${action} is delivered: ${records.map((e) => e.data.action).join(', ')}`);
      assert.deepEqual(
        event.data,
        listed.find((record) => record.action === action && record.id === event.data.id),
      );
    }
    const session = records.find((e) => e.data.action === 'auth.login');
    assert.equal(session.request_id, login.headers['x-request-id']);
    assert.ok(!r.received.some((got) => got.body.includes(json(login).token.refresh_token)), 'never a token');
  });

  it('is opt-in: a subscription of other types gets none, and none is written while no subscription lists it', async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    await subscribe(app, { token }, r.url, ['API_KEY_CREATED']);
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    const [got] = await r.waitFor(1);
    assert.equal(JSON.parse(got!.body).type, 'API_KEY_CREATED');
    await sleep(300);
    assert.deepEqual(auditRecordsIn(r), []);
    const written = await h.db.current.database.db
      .select()
      .from(domainEvents)
      .where(eq(domainEvents.type, 'AUDIT_RECORD'));
    assert.deepEqual(written, [], 'no AUDIT_RECORD event is written for nobody');
  });

  it("sends a customer's records to that customer only", async () => {
    const r = await receiver();
    const { app, world, token } = await customerSession(h, deliveringTo(r));
    await subscribe(app, { token }, r.url, ['AUDIT_RECORD']);
    const beta = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.otherLogin })).token
      .access_token;
    await createKey(app, { token: beta }, { user: 'ci@beta.test', customer_id: world.otherCustomerId });
    await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    await r.waitFor(2);
    await sleep(300);
    const records = auditRecordsIn(r);
    assert.ok(records.length >= 2);
    for (const event of records) assert.equal(event.customer_id, world.customerId);
    assert.ok(!records.some((event) => event.data.details?.user === 'ci@beta.test'));
  });
});
