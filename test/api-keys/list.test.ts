import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, deleteKey, listKeys } from '../helpers/api-keys.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';

const h = useTestApp();

const setup = () => customerSession(h);

describe('GET /v1/api-keys: happy', () => {
  it("lists the customer's CUSTOMER keys only, masked, newest first, with arrays of ids", async () => {
    const { app, world, token } = await setup();
    const a = json(await createKey(app, { token }, { user: 'a@alpha.test', customer_id: world.customerId }));
    const b = json(await createKey(app, { token }, { user: 'b@alpha.test', customer_id: world.customerId }));
    await createKey(
      app,
      { token },
      { user: 'pos@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[0] },
    );
    const res = await listKeys(app, { token });
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.deepEqual(body.page, { size: 10, total_elements: 2, total_pages: 1, number: 0 });
    assert.deepEqual(
      body.data.map((k: { id: string }) => k.id),
      [b.id, a.id],
    );
    const record = body.data[1];
    assert.deepEqual(Object.keys(record).sort(), [
      'access',
      'allowed_ips',
      'api_key',
      'create_date',
      'created_by',
      'customer_id',
      'expires_at',
      'id',
      'last_used_at',
      'name',
      'permissions',
      'rate_limit',
      'status',
      'update_date',
      'user',
      'user_type',
    ]);
    assert.equal(record.user_type, 'CUSTOMER');
    assert.deepEqual(record.customer_id, [world.customerId]);
    assert.equal(record.status, 'ENABLED');
    assert.equal(record.last_used_at, null);
    assert.equal(record.api_key, `fgk_****${a.api_key.slice(-4)}`);
    assert.ok(!('merchant_id' in record));
  });

  it("shows a merchant caller its merchant's keys, with merchant_id arrays", async () => {
    const { app, world, token } = await setup();
    await createKey(app, { token }, { user: 'c@alpha.test', customer_id: world.customerId });
    const mine = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    await issueKey(app, { user: 'pos2@alpha.test', customerId: world.customerId, merchantId: world.merchantIds[1]! });
    const body = json(await listKeys(app, { key: mine.api_key }));
    assert.equal(body.data.length, 1);
    assert.equal(body.data[0].id, mine.id);
    assert.equal(body.data[0].user_type, 'MERCHANT');
    assert.deepEqual(body.data[0].merchant_id, [world.merchantIds[0]]);
    assert.deepEqual(body.data[0].customer_id, [world.customerId]);
  });

  it("lets a customer list one of its merchants' keys with merchant_id", async () => {
    const { app, world, token } = await setup();
    const key = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const body = json(await listKeys(app, { token }, `?merchant_id=${world.merchantIds[0]}`));
    assert.deepEqual(
      body.data.map((k: { id: string }) => k.id),
      [key.id],
    );
    assert.equal(body.data[0].user_type, 'MERCHANT');
  });

  it('filters by status, case-insensitively, and by username', async () => {
    const { app, world, token } = await setup();
    const a = json(await createKey(app, { token }, { user: 'a@alpha.test', customer_id: world.customerId }));
    const b = json(await createKey(app, { token }, { user: 'b@alpha.test', customer_id: world.customerId }));
    assert.equal((await deleteKey(app, { token }, a.id)).statusCode, 204);
    const enabled = json(await listKeys(app, { token }));
    assert.deepEqual(
      enabled.data.map((k: { id: string }) => k.id),
      [b.id],
    );
    for (const status of ['DELETED', 'deleted', 'Deleted']) {
      const deleted = json(await listKeys(app, { token }, `?status=${status}`));
      assert.deepEqual(
        deleted.data.map((k: { id: string }) => k.id),
        [a.id],
      );
      assert.equal(deleted.data[0].status, 'DELETED');
      assert.ok(deleted.data[0].update_date >= deleted.data[0].create_date);
    }
    assert.equal(json(await listKeys(app, { token }, '?status=enabled')).data.length, 1);
    const byUser = json(await listKeys(app, { token }, '?username=B@alpha.test'));
    assert.deepEqual(
      byUser.data.map((k: { id: string }) => k.id),
      [b.id],
    );
    assert.equal(json(await listKeys(app, { token }, '?username=nobody@alpha.test')).page.total_elements, 0);
  });

  it('pages with correct totals, and an empty page past the end', async () => {
    const { app, world, token } = await setup();
    for (let i = 0; i < 5; i++)
      await createKey(app, { token }, { user: `u${i}@alpha.test`, customer_id: world.customerId });
    const all = json(await listKeys(app, { token }, '?size=100')).data.map((k: { id: string }) => k.id);
    const p0 = json(await listKeys(app, { token }, '?size=2&page=0'));
    const p2 = json(await listKeys(app, { token }, '?size=2&page=2'));
    assert.deepEqual(p0.page, { size: 2, total_elements: 5, total_pages: 3, number: 0 });
    assert.deepEqual(
      p0.data.map((k: { id: string }) => k.id),
      all.slice(0, 2),
    );
    assert.deepEqual(
      p2.data.map((k: { id: string }) => k.id),
      all.slice(4),
    );
    const past = json(await listKeys(app, { token }, '?size=2&page=7'));
    assert.deepEqual(past.data, []);
    assert.deepEqual(past.page, { size: 2, total_elements: 5, total_pages: 3, number: 7 });
  });
});

describe('GET /v1/api-keys: errors', () => {
  for (const query of [
    '?size=0',
    '?size=1e3',
    '?page=-1',
    '?page=1.5',
    '?size=abc',
    '?status=REVOKED',
    '?merchant_id=nope',
  ]) {
    it(`answers 400 for ${query}`, async () => {
      const { app, token } = await setup();
      const res = await listKeys(app, { token }, query);
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).code, 'validation_failed');
      assert.ok(json(res).errors.length > 0);
    });
  }
});

describe('GET /v1/api-keys: security', () => {
  it("never shows another customer's keys, and a foreign merchant_id is a 404", async () => {
    const { app, world, token } = await setup();
    await issueKey(app, { user: 'other@beta.test', customerId: world.otherCustomerId });
    await issueKey(app, {
      user: 'otherpos@beta.test',
      customerId: world.otherCustomerId,
      merchantId: world.otherMerchantIds[0]!,
    });
    assert.equal(json(await listKeys(app, { token })).page.total_elements, 0);
    const foreign = await listKeys(app, { token }, `?merchant_id=${world.otherMerchantIds[0]}`);
    assert.equal(foreign.statusCode, 404);
  });

  it('lets a merchant caller see no other merchant', async () => {
    const { app, world } = await setup();
    const mine = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const res = await listKeys(app, { key: mine.api_key }, `?merchant_id=${world.merchantIds[1]}`);
    assert.equal(res.statusCode, 404);
  });
});
