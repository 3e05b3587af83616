/**
 * API keys as the platform documents them (contract section 20): user_type
 * checked against merchant_id, status and update_date in the answer, the SDK's
 * POST /auth/users with X-API-KEY and Authorization together, and a bare
 * token in Authorization. Every refusal writes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keysSnapshot } from '../helpers/api-keys.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey, loginAs } from '../helpers/fixtures.js';

const h = useTestApp();

describe('POST /v1/api-keys: user_type', () => {
  it('takes user_type that agrees with merchant_id, and answers status and update_date', async () => {
    const { app, world, token } = await customerSession(h);
    const customer = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(token),
      payload: { user: 'ci@alpha.test', customer_id: world.customerId, user_type: 'CUSTOMER' },
    });
    assert.equal(customer.statusCode, 201, customer.body);
    assert.equal(json(customer).user_type, 'CUSTOMER');
    assert.equal(json(customer).status, 'ENABLED');
    assert.equal(json(customer).update_date, json(customer).create_date);
    const merchant = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(token),
      payload: {
        user: 'pos@alpha.test',
        customer_id: world.customerId,
        merchant_id: world.merchantIds[0],
        user_type: 'MERCHANT',
      },
    });
    assert.equal(merchant.statusCode, 201, merchant.body);
    assert.equal(json(merchant).user_type, 'MERCHANT');
  });

  it('refuses user_type that disagrees with merchant_id: 400 naming user_type, nothing written', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await keysSnapshot(app.database);
    for (const payload of [
      { user: 'a@alpha.test', customer_id: world.customerId, user_type: 'MERCHANT' },
      { user: 'b@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[0], user_type: 'CUSTOMER' },
      { user: 'c@alpha.test', customer_id: world.customerId, user_type: 'ADMIN' },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: bearer(token), payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(
        json(res).errors.some((e: { field: string }) => e.field === 'user_type'),
        res.body,
      );
    }
    assert.equal(await keysSnapshot(app.database), before, 'nothing written');
  });
});

describe("POST /auth/users: the platform SDK's merchant key", () => {
  const body = (world: { customerId: string; merchantIds: string[] }, user = 'sdk@alpha.test') => ({
    user,
    user_type: 'MERCHANT',
    customer_id: world.customerId,
    merchant_id: world.merchantIds[0],
  });

  it("creates a merchant key with a customer key, a bare token, or both together; the answer is the platform's", async () => {
    const { app, world, token } = await customerSession(h);
    const { api_key } = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    for (const [url, headers, user] of [
      ['/auth/users', { 'x-api-key': api_key }, 'sdk1@alpha.test'],
      ['/api/auth/users', { authorization: token }, 'sdk2@alpha.test'],
      ['/auth/users', { 'x-api-key': api_key, authorization: token }, 'sdk3@alpha.test'],
      ['/api/auth/users', { 'x-api-key': api_key, authorization: `Bearer ${token}` }, 'sdk4@alpha.test'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url, headers, payload: body(world, user) });
      assert.equal(res.statusCode, 201, `${url} ${Object.keys(headers)}: ${res.body}`);
      const key = json(res);
      assert.deepEqual(Object.keys(key).sort(), [
        'api_key',
        'create_date',
        'customer_id',
        'id',
        'merchant_id',
        'update_date',
        'user',
        'user_type',
      ]);
      assert.deepEqual(
        [key.user, key.user_type, key.customer_id, key.merchant_id],
        [user, 'MERCHANT', world.customerId, world.merchantIds[0]],
      );
      const me = await app.inject({ url: '/v1/users/me', headers: { 'x-api-key': key.api_key } });
      assert.equal(me.statusCode, 200, me.body);
    }
  });

  it('refuses a key and a token of different customers, or one of them invalid: 401, nothing written', async () => {
    const { app, world, token } = await customerSession(h);
    const { api_key } = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const other = await loginAs(app, world.otherLogin);
    const { api_key: otherKey } = await issueKey(app, { user: 'ci@beta.test', customerId: world.otherCustomerId });
    const before = await keysSnapshot(app.database);
    for (const headers of [
      { 'x-api-key': api_key, authorization: other.access_token },
      { 'x-api-key': otherKey, authorization: token },
      { 'x-api-key': api_key, authorization: 'not-a-token' },
      { 'x-api-key': 'fgk_nope', authorization: token },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/auth/users', headers, payload: body(world) });
      assert.equal(res.statusCode, 401, res.body);
    }
    assert.equal(await keysSnapshot(app.database), before, 'nothing written');
  });

  it('refuses a CUSTOMER user_type and a missing merchant_id: 400, nothing written', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await keysSnapshot(app.database);
    const { merchant_id: _m, ...withoutMerchant } = body(world);
    for (const [payload, field] of [
      [{ ...body(world), user_type: 'CUSTOMER' }, 'user_type'],
      [withoutMerchant, 'merchant_id'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/auth/users', headers: bearer(token), payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(
        json(res).errors.some((e: { field: string }) => e.field === field),
        res.body,
      );
    }
    assert.equal(await keysSnapshot(app.database), before, 'nothing written');
  });

  it('keeps two credentials ambiguous everywhere else', async () => {
    const { app, world, token } = await customerSession(h);
    const { api_key } = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const res = await app.inject({ url: '/v1/users/me', headers: { 'x-api-key': api_key, authorization: token } });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).code, 'ambiguous_credentials');
  });
});

describe('a bare token in Authorization', () => {
  it('is read as Bearer <token> on every operation', async () => {
    const { app, world, token } = await customerSession(h);
    assert.equal((await app.inject({ url: '/v1/users/me', headers: { authorization: token } })).statusCode, 200);
    assert.equal((await app.inject({ url: '/api/v1/merchants', headers: { authorization: token } })).statusCode, 200);
    const created = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { authorization: token },
      payload: { user: 'bare@alpha.test', customer_id: world.customerId },
    });
    assert.equal(created.statusCode, 201, created.body);
    const wrong = await app.inject({ url: '/v1/users/me', headers: { authorization: `${token}x` } });
    assert.equal(wrong.statusCode, 401);
    assert.equal(json(wrong).code, 'invalid_token');
  });
});
