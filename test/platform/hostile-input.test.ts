/**
 * docs/api.md#conventions: text PostgreSQL cannot store is a 400 naming the field,
 * instants outside what PostgreSQL holds are a 400, and identifiers are UUIDs
 * in any letter case, answered in lower case. Each refusal changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { bearer, useTestApp } from '../helpers/app.js';
import { keysSnapshot } from '../helpers/api-keys.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';
import { assignmentSnapshot, bulkAssign, plan } from '../helpers/plans.js';

async function assertRefused(app: FastifyInstance, request: InjectOptions, field: string) {
  const response = await app.inject(request);
  const where = `${request.method} ${request.url} ${JSON.stringify(request.payload)}`;
  assert.equal(response.statusCode, 400, `${where}: ${response.body}`);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const problem = response.json();
  assert.equal(problem.code, 'validation_failed', where);
  const error = problem.errors.find((e: { field: string }) => e.field === field);
  assert.ok(error, `${where} names ${field}: ${response.body}`);
  return error.message as string;
}

describe('hostile input in bodies and paths', () => {
  const h = useTestApp();

  it('refuses U+0000 and unpaired surrogates in every text field with a 400 naming it, and writes nothing', async () => {
    const { app, world, token } = await customerSession(h, { rateLimitAnonymousPerMinute: 0 });
    const { id } = await issueKey(app, { user: 'named@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(h.db.current.database);
    const auth = bearer(token);
    for (const bad of ['a\u0000b', '\u0000', 'a\ud800b', '\udfff']) {
      await assertRefused(
        app,
        { method: 'POST', url: '/v1/login', payload: { user: bad, password: world.login.password } },
        'user',
      );
      await assertRefused(
        app,
        { method: 'POST', url: '/v1/login', payload: { user: world.login.user, password: bad } },
        'password',
      );
      await assertRefused(
        app,
        { method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: bad } },
        'refresh_token',
      );
      await assertRefused(
        app,
        {
          method: 'POST',
          url: '/v1/api-keys',
          headers: auth,
          payload: { user: `x${bad}@alpha.test`, customer_id: world.customerId },
        },
        'user',
      );
      await assertRefused(
        app,
        {
          method: 'POST',
          url: '/v1/api-keys',
          headers: auth,
          payload: { user: 'new@alpha.test', customer_id: world.customerId, name: bad },
        },
        'name',
      );
      await assertRefused(
        app,
        { method: 'PATCH', url: `/v1/api-keys/${id}`, headers: auth, payload: { name: bad } },
        'name',
      );
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
    // A pair of surrogates is one character (an emoji): accepted.
    const named = await app.inject({
      method: 'PATCH',
      url: `/v1/api-keys/${id}`,
      headers: auth,
      payload: { name: 'till 😀' },
    });
    assert.equal(named.statusCode, 200, named.body);
    assert.equal(named.json().name, 'till 😀');
  });

  it('refuses a leap second in expires_at, and instants outside years 0001..9999 in UTC, with a 400', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await keysSnapshot(h.db.current.database);
    const auth = bearer(token);
    const message = await assertRefused(
      app,
      {
        method: 'POST',
        url: '/v1/api-keys',
        headers: auth,
        payload: { user: 'leap@alpha.test', customer_id: world.customerId, expires_at: '2027-06-30T23:59:60Z' },
      },
      'expires_at',
    );
    assert.match(message, /RFC 3339/);
    assert.equal(await keysSnapshot(h.db.current.database), before);
    const merchant = world.merchantIds[0]!;
    for (const [url, field] of [
      ['/v1/audit-events?from=0000-01-01T00:00:00Z', 'from'],
      [`/v1/audit-events?to=${encodeURIComponent('0001-01-01T00:00:00+23:59')}`, 'to'],
      ['/v1/audit-events?from=9999-12-31T23:59:59-23:59', 'from'],
      [`/v1/merchants/${merchant}/fee-rules?at=9999-12-31T23:59:59-00:01`, 'at'],
      [`/v1/merchants/${merchant}/fee-rules?at=2026-12-31T23:59:60Z`, 'at'],
    ] as const) {
      await assertRefused(app, { method: 'GET', url, headers: auth }, field);
    }
    // The edges themselves are instants PostgreSQL holds.
    for (const url of [
      `/v1/audit-events?from=0001-01-01T00:00:00Z&to=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`,
      `/v1/merchants/${merchant}/fee-rules?at=0001-01-01T00:00:00Z`,
    ]) {
      assert.equal((await app.inject({ method: 'GET', url, headers: auth })).statusCode, 200, url);
    }
  });

  it('takes identifiers in upper case and answers them in lower case', async () => {
    const { app, world, token } = await customerSession(h);
    const visa = plan();
    await app.services.importer.importDocument({ payment_plans: [visa] });
    const auth = bearer(token);
    const merchant = world.merchantIds[0]!;

    const created = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: auth,
      payload: {
        user: 'upper@alpha.test',
        customer_id: world.customerId.toUpperCase(),
        merchant_id: merchant.toUpperCase(),
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().customer_id, world.customerId);
    assert.equal(created.json().merchant_id, merchant);

    const listed = await app.inject({
      method: 'GET',
      url: `/v1/api-keys?merchant_id=${merchant.toUpperCase()}`,
      headers: auth,
    });
    assert.deepEqual(
      listed.json().data.map((k: { id: string }) => k.id),
      [created.json().id],
    );

    const assigned = await bulkAssign(app, auth, {
      merchant_ids: [merchant.toUpperCase()],
      payment_plan_ids: [visa.id.toUpperCase()],
    });
    assert.equal(assigned.statusCode, 201, assigned.body);
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), [`${merchant} ${visa.id}`]);

    const rules = await app.inject({
      method: 'GET',
      url: `/v1/merchants/${merchant.toUpperCase()}/fee-rules`,
      headers: auth,
    });
    assert.equal(rules.json().merchant_id, merchant);
    assert.deepEqual(
      rules.json().data.map((p: { id: string }) => p.id),
      [visa.id],
    );
    const selected = await app.inject({
      method: 'GET',
      url: `/v1/payment-plans?is_selected=true&merchant_id=${merchant.toUpperCase()}`,
      headers: auth,
    });
    assert.deepEqual(
      selected.json().data.map((p: { id: string }) => p.id),
      [visa.id],
    );

    const deleted = await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${String(created.json().id).toUpperCase()}`,
      headers: auth,
    });
    assert.equal(deleted.statusCode, 204, deleted.body);
  });
});
