/** Idempotency-Key (contract section 21): replays, refusals, and what a replay never does twice. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, like } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import {
  apiKeys,
  auditEvents,
  domainEvents,
  idempotencyKeys,
  merchantPaymentPlanHistory,
} from '../../src/db/schema.js';
import { type Injected, bearer, json, useTestApp } from '../helpers/app.js';
import { keysSnapshot } from '../helpers/api-keys.js';
import { customerSession, issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();
const database = () => h.db.current.database;

function createKey(app: Awaited<ReturnType<typeof h.app>>, headers: Record<string, string>, payload: object) {
  return app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload });
}

async function rows(table: typeof apiKeys | typeof auditEvents | typeof domainEvents | typeof idempotencyKeys) {
  const [row] = await database().db.select({ n: count() }).from(table);
  return row!.n;
}

function assertReplayOf(replay: Injected, first: Injected) {
  assert.equal(replay.statusCode, first.statusCode);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.headers['content-type'], first.headers['content-type']);
  assert.equal(replay.body, first.body, 'the body byte for byte');
}

describe('Idempotency-Key: replays', () => {
  it('a retried key creation answers the same key (same id, same full api_key) and creates one', async () => {
    const { app, world, token } = await customerSession(h);
    const headers = { ...bearer(token), 'idempotency-key': 'create-1' } as Record<string, string>;
    const payload = { user: 'integration@alpha.test', customer_id: world.customerId };
    const first = await createKey(app, headers, payload);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const keys = await rows(apiKeys);
    const audits = await rows(auditEvents);
    const events = await rows(domainEvents);
    const replay = await createKey(app, headers, payload);
    assertReplayOf(replay, first);
    assert.equal(json(replay).api_key, json(first).api_key);
    assert.equal(json(replay).id, json(first).id);
    assert.equal(await rows(apiKeys), keys, 'no second key');
    assert.equal(await rows(auditEvents), audits, 'no second audit record');
    assert.equal(await rows(domainEvents), events, 'no second event');
  });

  it('a replay never reaches the handler, even with an onSend hook that waits', async () => {
    // The service's own onSend hooks do not wait; one that does must not let a replay run the change again.
    const app = await buildApp({ config: testConfig(), database: database() });
    try {
      app.addHook('onSend', async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
      });
      await app.ready();
      const world = await seedWorld(app);
      const token = (await loginAs(app, world.login)).access_token;
      const headers = { ...bearer(token), 'idempotency-key': 'waiting-hook' } as Record<string, string>;
      const payload = { user: 'integration@alpha.test', customer_id: world.customerId };
      const first = await createKey(app, headers, payload);
      assert.equal(first.statusCode, 201, first.body);
      const keys = await rows(apiKeys);
      const replay = await createKey(app, headers, payload);
      assertReplayOf(replay, first);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await rows(apiKeys), keys, 'no second key');
    } finally {
      await app.close();
    }
  });

  it('the same key with another body is 422 idempotency_key_reused and changes nothing', async () => {
    const { app, world, token } = await customerSession(h);
    const headers = { ...bearer(token), 'idempotency-key': 'create-2' } as Record<string, string>;
    await createKey(app, headers, { user: 'integration@alpha.test', customer_id: world.customerId });
    const before = await keysSnapshot(database());
    const other = await createKey(app, headers, { user: 'other@alpha.test', customer_id: world.customerId });
    assert.equal(other.statusCode, 422, other.body);
    assert.equal(json(other).code, 'idempotency_key_reused');
    assert.equal(await keysSnapshot(database()), before);
  });

  it('a malformed key is 400 invalid_idempotency_key and changes nothing', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await keysSnapshot(database());
    for (const key of ['', 'x'.repeat(256), 'naïve', 'tab\there']) {
      const res = await createKey(app, { ...bearer(token), 'idempotency-key': key } as Record<string, string>, {
        user: 'integration@alpha.test',
        customer_id: world.customerId,
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(key)}: ${res.body}`);
      assert.equal(json(res).code, 'invalid_idempotency_key');
    }
    assert.equal(await keysSnapshot(database()), before);
    assert.equal(await rows(idempotencyKeys), 0);
  });

  it('accepts 255 printable characters, spaces and symbols included', async () => {
    const { app, world, token } = await customerSession(h);
    const key = `a ~!${'z'.repeat(251)}`;
    const res = await createKey(app, { ...bearer(token), 'idempotency-key': key } as Record<string, string>, {
      user: 'integration@alpha.test',
      customer_id: world.customerId,
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  it('a 400 is replayed as the same 400', async () => {
    const { app, token } = await customerSession(h);
    const headers = { ...bearer(token), 'idempotency-key': 'bad-body' } as Record<string, string>;
    const first = await createKey(app, headers, { user: 'integration@alpha.test' });
    assert.equal(first.statusCode, 400, first.body);
    const replay = await createKey(app, headers, { user: 'integration@alpha.test' });
    assertReplayOf(replay, first);
  });

  it('never crosses callers: another key of the same customer with the same Idempotency-Key is a new request', async () => {
    const { app, world } = await customerSession(h);
    const one = await issueKey(app, { user: 'one@alpha.test', customerId: world.customerId });
    const two = await issueKey(app, { user: 'two@alpha.test', customerId: world.customerId });
    const payload = { user: 'integration@alpha.test', customer_id: world.customerId };
    const first = await createKey(app, { 'x-api-key': one.api_key, 'idempotency-key': 'shared' }, payload);
    const second = await createKey(app, { 'x-api-key': two.api_key, 'idempotency-key': 'shared' }, payload);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(second.headers['idempotent-replayed'], undefined);
    assert.notEqual(json(second).api_key, json(first).api_key);
  });

  it('a replayed bulk assignment adds no history row, no audit record and no event', async () => {
    const app = await h.app();
    const { headers, plans, m0 } = await seedCatalogue(app);
    const withKey = { ...headers, 'idempotency-key': 'assign-1' } as Record<string, string>;
    const payload = { merchant_ids: [m0], payment_plan_ids: [plans.visa1Own.id] };
    const send = () => app.inject({ method: 'POST', url: '/v1/fee-rules/bulk-assign', headers: withKey, payload });
    const first = await send();
    assert.equal(first.statusCode, 201, first.body);
    const tally = async () => ({
      history: (await database().db.select({ n: count() }).from(merchantPaymentPlanHistory))[0]!.n,
      audits: (
        await database().db.select({ n: count() }).from(auditEvents).where(like(auditEvents.action, 'fee_rules.%'))
      )[0]!.n,
      events: await rows(domainEvents),
    });
    const before = await tally();
    assertReplayOf(await send(), first);
    assert.deepEqual(await tally(), before);
  });

  it('a scheduled assignment is replayed as its 202 with the same scheduled change, and schedules one', async () => {
    const app = await h.app();
    const { headers, plans, m0 } = await seedCatalogue(app);
    const effective_at = new Date(Date.now() + 3600_000).toISOString();
    const withKey = { ...headers, 'idempotency-key': 'schedule-1' } as Record<string, string>;
    const payload = { merchant_ids: [m0], payment_plan_ids: [plans.visa1Own.id], effective_at };
    const send = () => app.inject({ method: 'POST', url: '/v1/fee-rules/bulk-assign', headers: withKey, payload });
    const first = await send();
    assert.equal(first.statusCode, 202, first.body);
    const events = await rows(domainEvents);
    assertReplayOf(await send(), first);
    assert.equal(await rows(domainEvents), events, 'no second FEE_RULES_SCHEDULED');
  });

  it('a new user is replayed with the same temporary password, and made once', async () => {
    const { app, token } = await customerSession(h);
    const headers = { ...bearer(token), 'idempotency-key': 'user-1' } as Record<string, string>;
    const send = () => app.inject({ method: 'POST', url: '/v1/users', headers, payload: { email: 'new@alpha.test' } });
    const first = await send();
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(typeof json(first).temporary_password, 'string');
    const audits = await rows(auditEvents);
    assertReplayOf(await send(), first);
    assert.equal(await rows(auditEvents), audits);
  });

  it('a refused step-up (401) is replayed as the same 401, not as the 204 its background audit write could have stored', async () => {
    const { app, world, token } = await customerSession(h);
    const headers = { ...bearer(token), 'idempotency-key': 'wrong-password' } as Record<string, string>;
    const payload = { current_password: 'not-the-password', new_password: 'a quiet violet harbour at noon' };
    const send = () => app.inject({ method: 'POST', url: '/v1/users/me/password', headers, payload });
    const first = await send();
    assert.equal(first.statusCode, 401, first.body);
    // The failure's audit record is written in the background: once it is there, the stored answer is still the 401.
    await waitFor(
      async () =>
        (
          await database()
            .db.select({ n: count() })
            .from(auditEvents)
            .where(like(auditEvents.action, 'auth.login_failed'))
        )[0]!.n > 0,
      'the failed step-up was never recorded',
    );
    assertReplayOf(await send(), first);
    assert.equal((await loginAs(app, world.login)).access_token.length > 0, true, 'the password is unchanged');
  });
});
