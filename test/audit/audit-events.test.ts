/** GET /v1/audit-events: the customer's audit trail, newest first (docs/fee-rules-history.md#what-the-api-offers). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { auditEvents } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { apiKey, bulkAssign, bulkAssignAll, type Credentials, seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

function listAudit(app: FastifyInstance, credentials: Credentials, query = '') {
  return app.inject({ method: 'GET', url: `/v1/audit-events${query}`, headers: credentials });
}

/** Alpha's catalogue, then three changes by Alpha (a key, then two assignments through that key and a token) and one by Beta. */
async function setup() {
  const app = await h.app();
  const catalogue = await seedCatalogue(app);
  const { world, plans, headers, m0, o0 } = catalogue;
  const create = await app.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers,
    payload: { user: 'integration@alpha.test', customer_id: world.customerId },
  });
  assert.equal(create.statusCode, 201, create.body);
  const key = json(create);
  await tick();
  const middle = new Date();
  await tick();
  const assigned = await bulkAssign(app, apiKey(key.api_key), {
    merchant_ids: [m0],
    payment_plan_ids: [plans.visa6.id],
  });
  assert.equal(assigned.statusCode, 201, assigned.body);
  assert.equal((await bulkAssignAll(app, headers, { payment_plan_ids: [plans.master1.id] })).statusCode, 201);
  const beta = bearer((await loginAs(app, world.otherLogin)).access_token);
  assert.equal(
    (await bulkAssign(app, beta, { merchant_ids: [o0], payment_plan_ids: [plans.visa6.id] })).statusCode,
    201,
  );
  return { app, ...catalogue, key, middle, assignedRequestId: String(assigned.headers['x-request-id']), beta };
}

describe('GET /v1/audit-events: happy', () => {
  it("lists the caller customer's records newest first, with who acted and through which request", async () => {
    const { app, headers, key, assignedRequestId, plans, world } = await setup();
    const res = await listAudit(app, headers);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.deepEqual(
      body.data.map((e: { action: string }) => e.action),
      ['fee_rules.bulk_assign_all', 'fee_rules.bulk_assign', 'api_key.created', 'auth.login'],
    );
    assert.deepEqual(body.page, { size: 10, total_elements: 4, total_pages: 1, number: 0 });
    const [all, named, created, login] = body.data;
    assert.equal(login.actor.user, world.login.user);
    assert.deepEqual(named.actor, { type: 'api_key', id: key.id, user: 'integration@alpha.test' });
    assert.equal(named.request_id, assignedRequestId);
    assert.deepEqual(named.details, { payment_plan_ids: [plans.visa6.id], merchant_count: 1, added: 1, removed: 1 });
    assert.deepEqual(named.target, { type: 'merchants', id: null });
    assert.equal(all.actor.type, 'user');
    assert.equal(all.actor.user, world.login.user);
    assert.equal(created.target.id, key.id);
    assert.ok(Number(all.id) > Number(named.id));
    for (const e of body.data) assert.match(e.create_date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(body.data[0].create_date >= body.data[1].create_date);
  });

  it('filters by action and by time, and pages', async () => {
    const { app, headers, middle } = await setup();
    const byAction = json(await listAudit(app, headers, '?action=api_key.created'));
    assert.deepEqual(
      byAction.data.map((e: { action: string }) => e.action),
      ['api_key.created'],
    );
    const since = json(await listAudit(app, headers, `?from=${middle.toISOString()}`));
    assert.deepEqual(
      since.data.map((e: { action: string }) => e.action),
      ['fee_rules.bulk_assign_all', 'fee_rules.bulk_assign'],
    );
    const until = json(await listAudit(app, headers, `?to=${middle.toISOString()}`));
    assert.deepEqual(
      until.data.map((e: { action: string }) => e.action),
      ['api_key.created', 'auth.login'],
    );
    const page = json(await listAudit(app, headers, '?page=1&size=2'));
    assert.deepEqual(
      page.data.map((e: { action: string }) => e.action),
      ['api_key.created', 'auth.login'],
    );
    assert.deepEqual(page.page, { size: 2, total_elements: 4, total_pages: 2, number: 1 });
    const none = json(await listAudit(app, headers, '?action=nothing.happened'));
    assert.deepEqual(none.data, []);
  });

  it('shows each customer only its own records', async () => {
    const { app, beta } = await setup();
    const body = json(await listAudit(app, beta));
    assert.deepEqual(
      body.data.map((e: { action: string }) => e.action),
      ['fee_rules.bulk_assign', 'auth.login'],
    );
  });

  it('answers to a customer API key', async () => {
    const { app, key } = await setup();
    const res = await listAudit(app, apiKey(key.api_key));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).page.total_elements, 4);
  });
});

describe('GET /v1/audit-events: logins', () => {
  it("shows logins, failed logins and detected refresh-token reuse as events of the user's customer, with the client address", async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const login = (payload: object) =>
      app.inject({ method: 'POST', url: '/v1/login', payload, remoteAddress: '203.0.113.9' });
    const first = json(await login(world.login)).token;
    assert.equal((await login({ user: world.login.user, password: 'a-wrong-guess' })).statusCode, 401);
    assert.equal((await login({ user: 'nobody@alpha.test', password: 'a-wrong-guess' })).statusCode, 401);
    const refresh = (token: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/login/refresh',
        payload: { refresh_token: token },
        remoteAddress: '198.51.100.7',
      });
    assert.equal((await refresh(first.refresh_token)).statusCode, 200);
    assert.equal((await refresh(first.refresh_token)).statusCode, 401);
    const alpha = bearer((await loginAs(app, world.login)).access_token);
    const actions = async () =>
      json(await listAudit(app, alpha)).data as Array<{
        action: string;
        actor: Record<string, unknown>;
        target: Record<string, unknown>;
        details: Record<string, unknown>;
      }>;
    // A failed login is written without the caller waiting for it.
    await waitFor(
      async () => (await actions()).some((e) => e.action === 'auth.login_failed'),
      'the failed login is in the trail',
    );
    const events = await actions();
    assert.deepEqual(
      events.map((e) => e.action),
      ['auth.login', 'auth.refresh_reuse_detected', 'auth.login_failed', 'auth.login'],
    );
    const [, reuse, failed, opened] = events;
    assert.deepEqual(opened!.details, { client_address: '203.0.113.9' });
    assert.equal(opened!.actor.user, world.login.user);
    assert.deepEqual(failed!.details, { client_address: '203.0.113.9' });
    assert.equal(failed!.actor.type, 'anonymous', 'whoever typed the password, it was not shown to be the user');
    assert.equal(failed!.target.type, 'user');
    assert.deepEqual(reuse!.details, { client_address: '198.51.100.7' });
    assert.equal(reuse!.actor.user, world.login.user);
    // The other customer sees none of it.
    const beta = bearer((await loginAs(app, world.otherLogin)).access_token);
    assert.deepEqual(
      json(await listAudit(app, beta)).data.map((e: { action: string }) => e.action),
      ['auth.login'],
    );
  });
});

describe('GET /v1/audit-events: errors', () => {
  for (const [name, query, field] of [
    ['an unknown parameter', '?actions=x', 'actions'],
    ['a from that is not an instant', '?from=yesterday', 'from'],
    ['a to without a time zone', '?to=2026-01-01T00:00:00', 'to'],
    ['a leap second', '?from=2016-12-31T23:59:60Z', 'from'],
    ['size 0', '?size=0', 'size'],
    ['a negative page', '?page=-1', 'page'],
  ]) {
    it(`answers 400 for ${name}`, async () => {
      const { app, headers } = await setup();
      const res = await listAudit(app, headers, query);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
      assert.equal(json(res).errors[0].field, field);
    });
  }

  it('answers 400 invalid_time_range when from is after to', async () => {
    const { app, headers } = await setup();
    const res = await listAudit(app, headers, '?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z');
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(json(res).code, 'invalid_time_range');
  });
});

describe('GET /v1/audit-events: security', () => {
  it('answers 403 to a merchant key, whatever the query', async () => {
    const { app, world, m0 } = await setup();
    const merchantKey = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    for (const query of ['', '?size=1000', '?bogus=1']) {
      const res = await listAudit(app, apiKey(merchantKey.api_key), query);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json(res).code, 'forbidden');
    }
  });

  it('answers 401 without credentials, and reading writes nothing', async () => {
    const { app, headers } = await setup();
    const { db } = h.db.current.database;
    const [before] = await db.select({ n: count() }).from(auditEvents);
    assert.equal((await listAudit(app, {})).statusCode, 401);
    assert.equal((await listAudit(app, headers)).statusCode, 200);
    const [after] = await db.select({ n: count() }).from(auditEvents);
    assert.equal(after!.n, before!.n);
  });
});
