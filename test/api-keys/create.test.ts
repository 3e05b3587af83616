import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { apiKeys, auditEvents, users } from '../../src/db/schema.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, keyCount, listKeys, whoAmI } from '../helpers/api-keys.js';
import { customerSession, issueKey, loginAs, uuid } from '../helpers/fixtures.js';

const h = useTestApp();

const setup = () => customerSession(h);

describe('POST /v1/api-keys: happy', () => {
  it('creates a CUSTOMER key with a bearer token: 201, full key once, no-store, audit', async () => {
    const { app, world, token } = await setup();
    const res = await createKey(app, { token }, { user: 'integration@alpha.test', customer_id: world.customerId });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = json(res);
    assert.deepEqual(Object.keys(body).sort(), [
      'access',
      'allowed_ips',
      'api_key',
      'create_date',
      'created_by',
      'customer_id',
      'expires_at',
      'id',
      'name',
      'permissions',
      'rate_limit',
      'status',
      'update_date',
      'user',
      'user_type',
    ]);
    assert.equal(body.update_date, body.create_date, 'a new key has not changed since it was made');
    assert.equal(body.user, 'integration@alpha.test');
    assert.equal(body.user_type, 'CUSTOMER');
    assert.equal(body.customer_id, world.customerId);
    assert.equal(body.status, 'ENABLED');
    assert.match(body.create_date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(body.api_key, /^fgk_[0-9A-Za-z]{38}$/);
    const [stored] = await h.db.current.database.db.select().from(apiKeys).where(eq(apiKeys.id, body.id));
    assert.equal(stored!.keyHash, sha256Hex(body.api_key));
    assert.ok(!JSON.stringify(stored).includes(body.api_key.slice(4, 36)), 'the secret part is not stored');
    const audit = await h.db.current.database.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'api_key.created'));
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.targetId, body.id);
    assert.equal(audit[0]!.actorType, 'user');
  });

  it('creates a MERCHANT key for one of its merchants, and a second key with the first key', async () => {
    const { app, world, token } = await setup();
    const first = json(
      await createKey(
        app,
        { token },
        { user: 'pos@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[0] },
      ),
    );
    assert.equal(first.user_type, 'MERCHANT');
    assert.equal(first.merchant_id, world.merchantIds[0]);
    assert.equal(first.customer_id, world.customerId);
    // A merchant caller creates a key for its own merchant.
    const second = await createKey(
      app,
      { key: first.api_key },
      { user: 'pos@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[0] },
    );
    assert.equal(second.statusCode, 201);
    assert.equal(json(second).user_type, 'MERCHANT');
  });

  it('lets a customer key create further keys', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const res = await createKey(app, { key: key.api_key }, { user: 'ci@alpha.test', customer_id: world.customerId });
    assert.equal(res.statusCode, 201);
  });

  it('accepts the e-mail of the login user: the key goes to an integration user, and login and key both work', async () => {
    const { app, world, token } = await setup();
    const res = await createKey(app, { token }, { user: world.login.user, customer_id: world.customerId });
    assert.equal(res.statusCode, 201);
    const db = h.db.current.database.db;
    const [loginUser, ...others] = await db
      .select()
      .from(users)
      .where(eq(users.email, world.login.user))
      .orderBy(users.createdAt);
    assert.equal(others.length, 1, 'one login user and one integration user');
    const [keyRow] = await db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.id, json(res).id));
    assert.equal(keyRow!.userId, others[0]!.id);
    assert.equal(others[0]!.passwordHash, null);
    assert.notEqual(loginUser!.passwordHash, null, 'the login keeps its password');
    await loginAs(app, world.login);
    const me = await whoAmI(app, json(res).api_key);
    assert.equal(me.statusCode, 200);
    assert.equal(json(me).id, others[0]!.id);
    assert.equal(json(me).auth, 'api_key');
    // The same e-mail as a MERCHANT user is still a conflict within the customer.
    const asMerchant = await createKey(
      app,
      { token },
      { user: world.login.user, customer_id: world.customerId, merchant_id: world.merchantIds[0] },
    );
    assert.equal(asMerchant.statusCode, 409);
    assert.equal(json(asMerchant).code, 'user_conflict');
  });

  it("gives two customers' keys for one e-mail to two independent users, each listing only its own", async () => {
    const { app, world, token } = await setup();
    const otherToken = (await loginAs(app, world.otherLogin)).access_token;
    const mine = await createKey(app, { token }, { user: 'Shared@Both.test', customer_id: world.customerId });
    const theirs = await createKey(
      app,
      { token: otherToken },
      { user: 'shared@both.test', customer_id: world.otherCustomerId, merchant_id: world.otherMerchantIds[0] },
    );
    assert.equal(mine.statusCode, 201);
    assert.equal(theirs.statusCode, 201, theirs.body);
    assert.equal(json(theirs).user_type, 'MERCHANT');
    const owners = await h.db.current.database.db.select().from(users).where(eq(users.email, 'shared@both.test'));
    assert.deepEqual(owners.map((u) => u.customerId).sort(), [world.customerId, world.otherCustomerId].sort());
    const listed = json(await listKeys(app, { token }, '?username=shared@both.test'));
    assert.deepEqual(
      listed.data.map((k: { id: string }) => k.id),
      [json(mine).id],
    );
    const theirListing = json(
      await listKeys(app, { token: otherToken }, `?merchant_id=${world.otherMerchantIds[0]}&username=shared@both.test`),
    );
    assert.deepEqual(
      theirListing.data.map((k: { id: string }) => k.id),
      [json(theirs).id],
    );
    assert.equal((await whoAmI(app, json(theirs).api_key)).json().customer_id, world.otherCustomerId);
  });

  it('answers a customer the same whether or not another customer uses the e-mail', async () => {
    const { app, world, token } = await setup();
    const otherToken = (await loginAs(app, world.otherLogin)).access_token;
    const fresh = await createKey(
      app,
      { token: otherToken },
      { user: 'fresh@beta.test', customer_id: world.otherCustomerId },
    );
    await createKey(app, { token }, { user: 'used@alpha.test', customer_id: world.customerId });
    const used = await createKey(
      app,
      { token: otherToken },
      { user: 'used@alpha.test', customer_id: world.otherCustomerId },
    );
    assert.equal(used.statusCode, fresh.statusCode);
    const shape = (body: Record<string, unknown>) => Object.keys(body).sort();
    assert.deepEqual(shape(json(used)), shape(json(fresh)));
  });

  it('counts only ENABLED keys toward the limit of 10', async () => {
    const { app, world, token } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push(json(await createKey(app, { token }, { user: 'x@alpha.test', customer_id: world.customerId })).id);
    await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${ids[0]}`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(
      (await createKey(app, { token }, { user: 'x@alpha.test', customer_id: world.customerId })).statusCode,
      201,
    );
  });
});

describe('POST /v1/api-keys: errors', () => {
  it('answers 409 api_key_limit_reached for the 11th key, and writes nothing', async () => {
    const { app, world, token } = await setup();
    for (let i = 0; i < 10; i++)
      assert.equal(
        (await createKey(app, { token }, { user: 'x@alpha.test', customer_id: world.customerId })).statusCode,
        201,
      );
    const res = await createKey(app, { token }, { user: 'x@alpha.test', customer_id: world.customerId });
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).code, 'api_key_limit_reached');
    assert.equal(await keyCount(h.db.current.database), 10);
  });

  it('never makes 11 keys from 20 concurrent creations', async () => {
    const { app, world, token } = await setup();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        createKey(app, { token }, { user: 'race@alpha.test', customer_id: world.customerId }),
      ),
    );
    const created = results.filter((r) => r.statusCode === 201).length;
    const refused = results.filter((r) => r.statusCode === 409).length;
    assert.equal(created, 10);
    assert.equal(refused, 10);
    assert.equal(await keyCount(h.db.current.database), 10);
  });

  it("answers 409 user_conflict when the e-mail is one of the customer's users of another type or merchant, and writes nothing", async () => {
    const { app, world, token } = await setup();
    await createKey(app, { token }, { user: 'shared@alpha.test', customer_id: world.customerId });
    await createKey(
      app,
      { token },
      { user: 'pos@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[0] },
    );
    const db = h.db.current.database.db;
    const before = { keys: await keyCount(h.db.current.database), users: (await db.select().from(users)).length };
    const asMerchant = await createKey(
      app,
      { token },
      { user: 'shared@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[0] },
    );
    assert.equal(asMerchant.statusCode, 409);
    assert.equal(json(asMerchant).code, 'user_conflict');
    const otherMerchant = await createKey(
      app,
      { token },
      { user: 'pos@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[1] },
    );
    assert.equal(otherMerchant.statusCode, 409);
    assert.equal(json(otherMerchant).code, 'user_conflict');
    const asCustomer = await createKey(app, { token }, { user: 'POS@alpha.test', customer_id: world.customerId });
    assert.equal(asCustomer.statusCode, 409);
    assert.deepEqual(
      { keys: await keyCount(h.db.current.database), users: (await db.select().from(users)).length },
      before,
    );
  });

  const bad: Array<[string, (w: { customerId: string }) => object, string]> = [
    ['a user that is not an e-mail', (w) => ({ user: 'not-an-email', customer_id: w.customerId }), 'user'],
    ['a missing user', (w) => ({ customer_id: w.customerId }), 'user'],
    ['a missing customer_id', () => ({ user: 'a@alpha.test' }), 'customer_id'],
    ['a customer_id that is not a UUID', () => ({ user: 'a@alpha.test', customer_id: '42' }), 'customer_id'],
    [
      'a merchant_id that is not a UUID',
      (w) => ({ user: 'a@alpha.test', customer_id: w.customerId, merchant_id: 'x' }),
      'merchant_id',
    ],
    ['an unknown field', (w) => ({ user: 'a@alpha.test', customer_id: w.customerId, scope: 'all' }), 'scope'],
  ];
  for (const [name, payload, field] of bad) {
    it(`answers 400 for ${name}, writing nothing`, async () => {
      const { app, world, token } = await setup();
      const res = await createKey(app, { token }, payload(world));
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).errors[0].field, field);
      assert.equal(await keyCount(h.db.current.database), 0);
    });
  }

  it('answers 401 without credentials', async () => {
    const { app, world } = await setup();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { user: 'a@alpha.test', customer_id: world.customerId },
    });
    assert.equal(res.statusCode, 401);
  });
});

describe('POST /v1/api-keys: security', () => {
  it("answers 404 for another customer's id, without creating anything", async () => {
    const { app, world, token } = await setup();
    const res = await createKey(app, { token }, { user: 'a@alpha.test', customer_id: world.otherCustomerId });
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).code, 'customer_not_found');
    const foreignMerchant = await createKey(
      app,
      { token },
      { user: 'a@alpha.test', customer_id: world.customerId, merchant_id: world.otherMerchantIds[0] },
    );
    assert.equal(foreignMerchant.statusCode, 404);
    const unknownMerchant = await createKey(
      app,
      { token },
      { user: 'a@alpha.test', customer_id: world.customerId, merchant_id: uuid('d') },
    );
    assert.equal(unknownMerchant.statusCode, 404);
    // Foreign and unknown merchants get the very same answer: nothing leaks.
    assert.equal(json(foreignMerchant).detail, json(unknownMerchant).detail);
    assert.equal(await keyCount(h.db.current.database), 0);
  });

  it('refuses a merchant caller a CUSTOMER key (403) and another merchant (404)', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const customerKey = await createKey(
      app,
      { key: key.api_key },
      { user: 'sneaky@alpha.test', customer_id: world.customerId },
    );
    assert.equal(customerKey.statusCode, 403);
    const sibling = await createKey(
      app,
      { key: key.api_key },
      { user: 'sneaky@alpha.test', customer_id: world.customerId, merchant_id: world.merchantIds[1] },
    );
    assert.equal(sibling.statusCode, 404);
    assert.equal(await keyCount(h.db.current.database), 1);
    const [sneaky] = await h.db.current.database.db.select().from(users).where(eq(users.email, 'sneaky@alpha.test'));
    assert.equal(sneaky, undefined, 'no user was created');
  });

  it('returns the full key only at creation: listings never contain its secret part', async () => {
    const { app, world, token } = await setup();
    const created = json(await createKey(app, { token }, { user: 'a@alpha.test', customer_id: world.customerId }));
    const listing = await listKeys(app, { token });
    assert.ok(!listing.body.includes(created.api_key.slice(4, 36)));
  });
});
