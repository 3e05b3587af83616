import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { merchants } from '../../src/db/schema.js';
import { bearer, json, useSharedTestApp, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld, uuid } from '../helpers/fixtures.js';
import { argentineMerchant, createMerchant, mexicanMerchant, merchantWithNameOnly } from '../helpers/merchants.js';
import { apiKey } from '../helpers/plans.js';

const h = useTestApp();

async function setup() {
  return sessionOn(await h.app());
}

/** Two customers on `app`, and a listing as the first one's owner. */
async function sessionOn(app: FastifyInstance) {
  const world = await seedWorld(app);
  const token = await loginAs(app, world.login);
  const list = (query = '', headers = bearer(token.access_token)) =>
    app.inject({ method: 'GET', url: `/v1/merchants${query}`, headers });
  return { app, world, list };
}

describe('GET /v1/merchants: happy', () => {
  it("lists the customer's merchants, newest first, with the page descriptor", async () => {
    const { world, list } = await setup();
    // Same create_date for all: the id breaks the tie, descending.
    const res = await list();
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.deepEqual(body.page, { size: 10, total_elements: 2, total_pages: 1, number: 0 });
    assert.deepEqual(
      body._embedded.merchants.map((m: { id: string }) => m.id),
      [...world.merchantIds].sort().reverse(),
    );
    const [first] = body._embedded.merchants;
    assert.equal(first.customer_id, world.customerId);
    assert.match(first.create_date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // A merchant with only a name (the import's) answers null for every field it lacks.
    assert.deepEqual(
      first,
      merchantWithNameOnly({
        id: first.id,
        customer_id: world.customerId,
        name: first.name,
        create_date: first.create_date,
      }),
    );
  });

  it('orders by create_date before id, and pages', async () => {
    const { world, list } = await setup();
    const ids = Array.from({ length: 5 }, () => uuid('d'));
    await h.db.current.database.db.insert(merchants).values(
      ids.map((id, i) => ({
        id,
        customerId: world.customerId,
        name: `Shop ${i}`,
        createdAt: new Date(Date.UTC(2030, 0, 1 + i)),
      })),
    );
    const first = json(await list('?size=3'));
    assert.deepEqual(
      first._embedded.merchants.map((m: { id: string }) => m.id),
      [ids[4], ids[3], ids[2]],
    );
    assert.deepEqual(first.page, { size: 3, total_elements: 7, total_pages: 3, number: 0 });
    const second = json(await list('?size=3&page=1'));
    assert.deepEqual(
      second._embedded.merchants.map((m: { id: string }) => m.id),
      [ids[1], ids[0], [...world.merchantIds].sort().reverse()[0]],
    );
  });

  it('answers an empty page with correct totals past the end', async () => {
    const { list } = await setup();
    const body = json(await list('?page=5&size=1'));
    assert.deepEqual(body, {
      _embedded: { merchants: [] },
      page: { size: 1, total_elements: 2, total_pages: 2, number: 5 },
    });
  });

  it("serves a size above 10,000 (the platform's maximum) as 10,000, and says so in page.size", async () => {
    const { list } = await setup();
    for (const [size, served] of [
      ['1001', 1001],
      ['10000', 10000],
      ['10001', 10000],
      ['99999999999999999999', 10000],
      ['100', 100],
    ] as const) {
      const res = await list(`?size=${size}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res).page, { size: served, total_elements: 2, total_pages: 1, number: 0 }, `size=${size}`);
    }
  });
});

describe('GET /v1/merchants: the wire format of a page', () => {
  it('answers each merchant byte for byte as GET /v1/merchants/{id} does, old and onboarded, every instant to the millisecond', async () => {
    const { app, world, list } = await setup();
    const owner = bearer((await loginAs(app, world.login)).access_token);
    const mexican = json(await createMerchant(app, owner, mexicanMerchant(world.customerId)));
    const argentine = json(
      await createMerchant(app, owner, argentineMerchant(world.customerId, { merchant_code: 'AR-1' })),
    );
    await app.inject({
      method: 'PATCH',
      url: `/v1/merchants/${argentine.id}`,
      headers: owner,
      payload: { status: 'INACTIVE' },
    });
    // Old merchants (only a name), at instants whose printing can go wrong: no
    // milliseconds, one digit of them, a year before 1000, and the newest first.
    const old = [
      { id: uuid('d'), at: '2030-01-02T03:04:05.000Z' },
      { id: uuid('d'), at: '2030-01-02T03:04:05.007Z' },
      { id: uuid('d'), at: '0999-12-31T23:59:59.999Z' },
    ];
    await h.db.current.database.db.insert(merchants).values(
      old.map(({ id, at }, i) => ({
        id,
        customerId: world.customerId,
        name: `Old "shop" ${i} \\ ñ`,
        createdAt: new Date(at),
        updatedAt: new Date(at),
      })),
    );
    const res = await list('?size=1000');
    assert.equal(res.statusCode, 200);
    const body = json(res);
    const ids = body._embedded.merchants.map((m: { id: string }) => m.id);
    assert.deepEqual(ids.slice(0, 2), [old[1]!.id, old[0]!.id]);
    assert.equal(ids.at(-1), old[2]!.id);
    assert.deepEqual(
      body._embedded.merchants.filter((m: { id: string }) => old.some((o) => o.id === m.id)),
      [old[1]!, old[0]!, old[2]!].map(({ id, at }) =>
        merchantWithNameOnly({
          id,
          customer_id: world.customerId,
          name: `Old "shop" ${old.findIndex((o) => o.id === id)} \\ ñ`,
          create_date: at,
        }),
      ),
    );
    const inactive = body._embedded.merchants.find((m: { id: string }) => m.id === argentine.id);
    assert.equal(inactive.status, 'INACTIVE');
    assert.deepEqual(
      body._embedded.merchants.find((m: { id: string }) => m.id === mexican.id),
      mexican,
    );
    // The page is the one-merchant answers, in order, joined: same keys, order, values and escapes.
    const singles: string[] = [];
    for (const id of ids) {
      const one = await app.inject({ method: 'GET', url: `/v1/merchants/${id}`, headers: owner });
      assert.equal(one.statusCode, 200);
      singles.push(one.body);
    }
    assert.equal(res.body, `{"_embedded":{"merchants":[${singles.join(',')}]},"page":${JSON.stringify(body.page)}}`);
  });
});

describe('GET /v1/merchants?q: search', () => {
  // Every test only reads: the shops are seeded once for all of them.
  const shared = useSharedTestApp();
  let shops: Awaited<ReturnType<typeof withShops>>;
  before(async () => {
    shops = await withShops();
  });

  async function withShops() {
    const { app, world, list } = await sessionOn(shared.app);
    const ids = [uuid('d'), uuid('d'), uuid('d')];
    await app.database.db.insert(merchants).values([
      {
        id: ids[0]!,
        customerId: world.customerId,
        name: 'Corner Coffee',
        createdAt: new Date(Date.UTC(2030, 0, 1)),
      },
      {
        id: ids[1]!,
        customerId: world.customerId,
        name: 'COFFEE & Co 100%_off',
        createdAt: new Date(Date.UTC(2030, 0, 2)),
      },
      {
        id: ids[2]!,
        customerId: world.otherCustomerId,
        name: 'Coffee elsewhere',
        createdAt: new Date(Date.UTC(2030, 0, 3)),
      },
    ]);
    return { list, ids };
  }
  const names = (body: Record<string, any>) => (body._embedded.merchants as { name: string }[]).map((m) => m.name);

  it("finds the caller's merchants whose name contains the text in any letter case, with the totals of the match", async () => {
    const { list } = shops;
    const body = json(await list('?q=cOfFeE'));
    assert.deepEqual(names(body), ['COFFEE & Co 100%_off', 'Corner Coffee']);
    assert.deepEqual(body.page, { size: 10, total_elements: 2, total_pages: 1, number: 0 });
    assert.deepEqual(names(json(await list('?q=coffee&size=1&page=1'))), ['Corner Coffee']);
  });

  it('takes % and _ literally', async () => {
    const { list } = shops;
    assert.deepEqual(names(json(await list(`?q=${encodeURIComponent('100%_')}`))), ['COFFEE & Co 100%_off']);
    assert.deepEqual(names(json(await list(`?q=${encodeURIComponent('%')}`))), ['COFFEE & Co 100%_off']);
    assert.deepEqual(names(json(await list('?q=_'))), ['COFFEE & Co 100%_off']);
  });

  it('finds a merchant by its id or the start of it, in any letter case', async () => {
    const { list, ids } = shops;
    assert.deepEqual(
      json(await list(`?q=${ids[0]}`))._embedded.merchants.map((m: { id: string }) => m.id),
      [ids[0]],
    );
    assert.deepEqual(
      json(await list(`?q=${ids[1]!.slice(0, 13).toUpperCase()}`))._embedded.merchants.map((m: { id: string }) => m.id),
      [ids[1]],
    );
  });

  it("never finds another customer's merchant, by name or by id", async () => {
    const { list, ids } = shops;
    assert.deepEqual(names(json(await list('?q=elsewhere'))), []);
    assert.deepEqual(json(await list(`?q=${ids[2]}`)), {
      _embedded: { merchants: [] },
      page: { size: 10, total_elements: 0, total_pages: 0, number: 0 },
    });
  });

  for (const [query, why] of [
    ['?q=', 'empty'],
    [`?q=${'a'.repeat(101)}`, 'over 100 characters'],
    ['?q=a%00b', 'a NUL'],
    ['?q=a&q=b', 'given twice'],
  ] as const) {
    it(`answers 400 validation_failed for a q that is ${why}`, async () => {
      const { list } = shops;
      const res = await list(query);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
    });
  }
});

describe('GET /v1/merchants: errors', () => {
  for (const query of ['?size=0', '?size=-5', '?size=1e4', '?page=-1', '?page=1.5', '?size=abc', '?sort=name']) {
    it(`answers 400 validation_failed for ${query}`, async () => {
      const { list } = await setup();
      const res = await list(query);
      assert.equal(res.statusCode, 400, res.body);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      assert.equal(json(res).code, 'validation_failed');
    });
  }
});

describe('GET /v1/merchants: security', () => {
  it('answers 401 without credentials', async () => {
    const { app } = await setup();
    const res = await app.inject({ method: 'GET', url: '/v1/merchants' });
    assert.equal(res.statusCode, 401);
    assert.ok(res.headers['www-authenticate']);
  });

  it("never shows another customer's merchants", async () => {
    const { app, world, list } = await setup();
    const other = await loginAs(app, world.otherLogin);
    const mine = json(await list())._embedded.merchants.map((m: { id: string }) => m.id);
    const theirs = json(await list('', bearer(other.access_token)))._embedded.merchants.map(
      (m: { id: string }) => m.id,
    );
    assert.deepEqual([...mine].sort(), [...world.merchantIds].sort());
    assert.deepEqual([...theirs].sort(), [...world.otherMerchantIds].sort());
  });

  it('shows a merchant caller only itself', async () => {
    const { app, world, list } = await setup();
    const key = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[1]!,
    });
    const body = json(await list('', apiKey(key.api_key)));
    assert.deepEqual(
      body._embedded.merchants.map((m: { id: string }) => m.id),
      [world.merchantIds[1]],
    );
    assert.deepEqual(body.page, { size: 10, total_elements: 1, total_pages: 1, number: 0 });
  });

  it('shows a customer API key caller every merchant of its customer', async () => {
    const { app, world, list } = await setup();
    const key = await issueKey(app, { user: 'integration@alpha.test', customerId: world.customerId });
    assert.equal(json(await list('', apiKey(key.api_key))).page.total_elements, 2);
  });
});
