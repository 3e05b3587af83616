/** docs/key-lifecycle.md: name, expiry, access and rate limit on creation; EXPIRED keys; read-only keys. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json, useTestApp } from '../helpers/app.js';
import {
  createKey,
  deleteKey,
  expireNow,
  keysSnapshot,
  listKeys,
  rollKey,
  updateKey,
  whoAmI,
} from '../helpers/api-keys.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';

const h = useTestApp();
const setup = () => customerSession(h);
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe('key settings on creation: happy', () => {
  it('takes name, expires_at, access and rate_limit, and shows them on the record and in listings', async () => {
    const { app, world, token } = await setup();
    const expiresAt = inDays(30);
    const res = await createKey(
      app,
      { token },
      {
        user: 'ci@alpha.test',
        customer_id: world.customerId,
        name: 'CI deploys',
        expires_at: expiresAt,
        access: 'read_only',
        rate_limit: { limit: 100, window_seconds: 60 },
      },
    );
    assert.equal(res.statusCode, 201);
    const created = json(res);
    assert.equal(created.name, 'CI deploys');
    assert.equal(created.expires_at, expiresAt);
    assert.equal(created.access, 'read_only');
    assert.deepEqual(created.rate_limit, { limit: 100, window_seconds: 60 });
    const [listed] = json(await listKeys(app, { token })).data;
    assert.equal(listed.id, created.id);
    assert.equal(listed.name, 'CI deploys');
    assert.equal(listed.expires_at, expiresAt);
    assert.equal(listed.access, 'read_only');
    assert.deepEqual(listed.rate_limit, { limit: 100, window_seconds: 60 });
  });

  it('defaults to no name, no expiry, full access and no rate limit (null, not absent)', async () => {
    const { app, world, token } = await setup();
    const created = json(await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId }));
    assert.deepEqual(
      [created.name, created.expires_at, created.access, created.rate_limit],
      [null, null, 'full', null],
    );
    const [listed] = json(await listKeys(app, { token })).data;
    assert.deepEqual([listed.name, listed.expires_at, listed.access, listed.rate_limit], [null, null, 'full', null]);
  });

  it('accepts the bounds: a 64-character name, an expiry just under 5 years, limit 100000, window 86400', async () => {
    const { app, world, token } = await setup();
    const res = await createKey(
      app,
      { token },
      {
        user: 'ci@alpha.test',
        customer_id: world.customerId,
        name: 'n'.repeat(64),
        expires_at: inDays(5 * 365),
        rate_limit: { limit: 100_000, window_seconds: 86_400 },
      },
    );
    assert.equal(res.statusCode, 201, res.body);
    const small = await createKey(
      app,
      { token },
      { user: 'ci@alpha.test', customer_id: world.customerId, rate_limit: { limit: 1, window_seconds: 1 } },
    );
    assert.equal(small.statusCode, 201, small.body);
  });
});

describe('key settings on creation: bad input is a 400 and writes nothing', () => {
  const year5 = () => {
    const d = new Date();
    d.setUTCFullYear(d.getUTCFullYear() + 5);
    return new Date(d.getTime() + 86_400_000).toISOString();
  };
  const bad: Array<[string, () => object, string]> = [
    ['expires_at in the past', () => ({ expires_at: new Date(Date.now() - 60_000).toISOString() }), 'expires_at'],
    [
      'expires_at now-ish (not in the future)',
      () => ({ expires_at: new Date(Date.now() - 1).toISOString() }),
      'expires_at',
    ],
    ['expires_at more than 5 years ahead', () => ({ expires_at: year5() }), 'expires_at'],
    ['expires_at that is not a timestamp', () => ({ expires_at: 'next tuesday' }), 'expires_at'],
    ['an empty name', () => ({ name: '' }), 'name'],
    ['a name over 64 characters', () => ({ name: 'n'.repeat(65) }), 'name'],
    ['a name with a control character', () => ({ name: 'a\u0000b' }), 'name'],
    ['a bad access', () => ({ access: 'admin' }), 'access'],
    ['access in upper case', () => ({ access: 'READ_ONLY' }), 'access'],
    ['rate limit 0', () => ({ rate_limit: { limit: 0, window_seconds: 60 } }), 'rate_limit.limit'],
    ['rate limit over 100000', () => ({ rate_limit: { limit: 100_001, window_seconds: 60 } }), 'rate_limit.limit'],
    ['window 0', () => ({ rate_limit: { limit: 10, window_seconds: 0 } }), 'rate_limit.window_seconds'],
    ['window over 86400', () => ({ rate_limit: { limit: 10, window_seconds: 86_401 } }), 'rate_limit.window_seconds'],
    ['a rate limit without a window', () => ({ rate_limit: { limit: 10 } }), 'rate_limit.window_seconds'],
    ['a fractional limit', () => ({ rate_limit: { limit: 1.5, window_seconds: 60 } }), 'rate_limit.limit'],
  ];
  for (const [what, extra, field] of bad) {
    it(`refuses ${what}`, async () => {
      const { app, world, token } = await setup();
      const before = await keysSnapshot(h.db.current.database);
      const res = await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId, ...extra() });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
      assert.equal(json(res).errors[0].field, field);
      assert.equal(await keysSnapshot(h.db.current.database), before);
    });
  }
});

describe('EXPIRED keys', () => {
  it('are refused with 401 api_key_expired, even when the key was cached', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const soon = await app.services.apiKeys.issueByOperator(
      { email: 'soon@alpha.test', customerId: world.customerId, merchantId: null },
      { requestId: null, actor: { type: 'operator', id: null } },
      { expires_at: new Date(Date.now() + 1200).toISOString() },
    );
    assert.equal((await whoAmI(app, soon.api_key)).statusCode, 200, 'works before its expiry (and is now cached)');
    await expireNow(h.db.current.database, key.id);
    const refused = await whoAmI(app, key.api_key);
    assert.equal(refused.statusCode, 401);
    assert.equal(json(refused).code, 'api_key_expired');
    assert.ok(refused.headers['www-authenticate']);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const late = await whoAmI(app, soon.api_key);
    assert.equal(late.statusCode, 401, 'the cached key expired on time');
    assert.equal(json(late).code, 'api_key_expired');
  });

  it('are listed only with status=EXPIRED (any case), with status EXPIRED', async () => {
    const { app, world, token } = await setup();
    const live = await issueKey(app, { user: 'a@alpha.test', customerId: world.customerId });
    const old = await issueKey(app, { user: 'b@alpha.test', customerId: world.customerId });
    const gone = await issueKey(app, { user: 'c@alpha.test', customerId: world.customerId });
    await expireNow(h.db.current.database, old.id);
    await deleteKey(app, { token }, gone.id);
    const ids = async (query: string) =>
      json(await listKeys(app, { token }, query)).data.map((k: { id: string }) => k.id);
    assert.deepEqual(await ids(''), [live.id]);
    assert.deepEqual(await ids('?status=ENABLED'), [live.id]);
    for (const status of ['EXPIRED', 'expired', 'Expired']) assert.deepEqual(await ids(`?status=${status}`), [old.id]);
    assert.deepEqual(await ids('?status=DELETED'), [gone.id]);
    const expired = json(await listKeys(app, { token }, '?status=expired')).data[0];
    assert.equal(expired.status, 'EXPIRED');
    assert.equal(json(await listKeys(app, { token }, '?status=expired')).page.total_elements, 1);
  });

  it('do not count toward the 10 ENABLED keys of a user', async () => {
    const { app, world, token } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push((await issueKey(app, { user: 'x@alpha.test', customerId: world.customerId })).id);
    const refused = await createKey(app, { token }, { user: 'x@alpha.test', customer_id: world.customerId });
    assert.equal(refused.statusCode, 409);
    await expireNow(h.db.current.database, ids[0]!);
    assert.equal(
      (await createKey(app, { token }, { user: 'x@alpha.test', customer_id: world.customerId })).statusCode,
      201,
    );
  });
});

describe('read_only keys', () => {
  it('may use GET operations', async () => {
    const { app, world, token } = await setup();
    const key = json(
      await createKey(app, { token }, { user: 'ro@alpha.test', customer_id: world.customerId, access: 'read_only' }),
    );
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
    assert.equal((await listKeys(app, { key: key.api_key })).statusCode, 200);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/merchants', headers: { 'x-api-key': key.api_key } })).statusCode,
      200,
    );
  });

  it('answer 403 read_only_key on every other operation: create, roll, change, delete keys, assign fee rules; nothing changes', async () => {
    const { app, world, token } = await setup();
    const ro = json(
      await createKey(app, { token }, { user: 'ro@alpha.test', customer_id: world.customerId, access: 'read_only' }),
    );
    const other = await issueKey(app, { user: 'other@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(h.db.current.database);
    const creds = { key: ro.api_key };
    const attempts = [
      await createKey(app, creds, { user: 'ro@alpha.test', customer_id: world.customerId }),
      await rollKey(app, creds, ro.id, {}),
      await rollKey(app, creds, other.id),
      await updateKey(app, creds, ro.id, { name: 'mine now' }),
      await deleteKey(app, creds, other.id),
      await app.inject({
        method: 'POST',
        url: '/v1/fee-rules/bulk-assign/all',
        headers: { 'x-api-key': ro.api_key },
        payload: { payment_plan_ids: [world.customerId] },
      }),
      await app.inject({ method: 'POST', url: '/v1/logout', headers: { 'x-api-key': ro.api_key } }),
    ];
    for (const res of attempts) {
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json(res).code, 'read_only_key');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it('rolls into a read_only key', async () => {
    const { app, world, token } = await setup();
    const ro = json(
      await createKey(app, { token }, { user: 'ro@alpha.test', customer_id: world.customerId, access: 'read_only' }),
    );
    const rolled = json(await rollKey(app, { token }, ro.id));
    assert.equal(rolled.access, 'read_only');
    assert.equal(
      (await createKey(app, { key: rolled.api_key }, { user: 'ro@alpha.test', customer_id: world.customerId }))
        .statusCode,
      403,
    );
  });
});
