import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paymentPlans } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, uuid } from '../helpers/fixtures.js';
import { apiKey, bulkAssign, seedCatalogue, sorted } from '../helpers/plans.js';

const h = useTestApp();
type Plan = { id: string; is_selected: boolean; commission: number };
const ids = (body: Record<string, any>) => (body.data as Plan[]).map((p) => p.id).sort();
const selected = (body: Record<string, any>) =>
  (body.data as Plan[])
    .filter((p) => p.is_selected)
    .map((p) => p.id)
    .sort();

async function setup() {
  const app = await h.app();
  const catalogue = await seedCatalogue(app);
  const list = async (query = '', headers = catalogue.headers) =>
    app.inject({ method: 'GET', url: `/v1/payment-plans${query}`, headers });
  const { foreign, ...visible } = catalogue.plans;
  return {
    app,
    ...catalogue,
    list,
    visibleIds: sorted(Object.values(visible).map((p) => p.id)),
    foreignId: foreign.id,
  };
}

describe('GET /v1/payment-plans: happy', () => {
  it("lists platform plans and the customer's own plans, never another customer's", async () => {
    const { list, visibleIds, foreignId } = await setup();
    const res = await list('?size=100');
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.deepEqual(ids(body), visibleIds);
    assert.ok(!ids(body).includes(foreignId));
    assert.equal(body.page.total_elements, visibleIds.length);
    assert.deepEqual(Object.keys(body.data[0]).sort(), [
      'card_brand',
      'commission',
      'has_installments',
      'id',
      'is_international',
      'is_selected',
      'payment_method',
      'term',
    ]);
  });

  it('has is_selected false for every plan without merchant_id', async () => {
    const { list } = await setup();
    assert.deepEqual(selected(json(await list('?size=100'))), []);
  });

  it('sets is_selected for the plans assigned to merchant_id, and follows an assignment', async () => {
    const { app, headers, list, plans, m0, m1 } = await setup();
    assert.deepEqual(
      selected(json(await list(`?size=100&merchant_id=${m0}`))),
      sorted([plans.visa1.id, plans.visa3.id, plans.visaDebit.id, plans.master1.id]),
    );
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa1Own.id] })).statusCode,
      201,
    );
    assert.deepEqual(
      selected(json(await list(`?size=100&merchant_id=${m0}`))),
      sorted([plans.visa1Own.id, plans.visa3.id, plans.visaDebit.id, plans.master1.id]),
    );
    assert.deepEqual(
      selected(json(await list(`?size=100&merchant_id=${m1}`))),
      sorted([plans.visa1Own.id, plans.visaIntl.id]),
    );
  });

  it('filters by card_brand and payment_method, in any case', async () => {
    const { list, plans } = await setup();
    assert.deepEqual(ids(json(await list('?card_brand=MASTERCARD'))), [plans.master1.id]);
    assert.deepEqual(ids(json(await list('?payment_method=debit'))), [plans.visaDebit.id]);
    assert.deepEqual(ids(json(await list('?card_brand=visa&payment_method=CREDIT&size=100'))).length, 5);
    assert.deepEqual(json(await list('?card_brand=DINERS')).data, []);
  });

  it('filters by is_selected for merchant_id', async () => {
    const { list, plans, m1, visibleIds } = await setup();
    const chosen = sorted([plans.visa1.id, plans.visaIntl.id]);
    assert.deepEqual(ids(json(await list(`?merchant_id=${m1}&is_selected=true`))), chosen);
    const others = json(await list(`?merchant_id=${m1}&is_selected=false&size=100`));
    assert.deepEqual(
      ids(others),
      visibleIds.filter((id) => !chosen.includes(id)),
    );
    assert.equal(others.page.total_elements, visibleIds.length - 2);
  });

  it('returns commission as a JSON number, exactly as stored', async () => {
    const { list, plans } = await setup();
    const res = await list('?size=100');
    assert.match(
      res.body,
      new RegExp(`"id":"${plans.visa6.id}","payment_method":"CREDIT","term":6,"commission":5.2375,`),
    );
    assert.equal(json(res).data.find((p: Plan) => p.id === plans.visa1.id).commission, 2.99);
  });

  it('lists newest first, then by id, with totals on a page past the end', async () => {
    const { world, list } = await setup();
    const newer = [uuid('e'), uuid('e')];
    await h.db.current.database.db.insert(paymentPlans).values(
      newer.map((id, i) => ({
        id,
        customerId: world.customerId,
        paymentMethod: 'QR',
        cardBrand: 'PIX',
        term: i,
        commission: '0.99',
        hasInstallments: false,
        isInternational: false,
        createdAt: new Date(Date.UTC(2031, 0, 1 + i)),
      })),
    );
    const first = json(await list('?size=2'));
    assert.deepEqual(
      first.data.map((p: Plan) => p.id),
      [newer[1], newer[0]],
    );
    assert.deepEqual(first.page, { size: 2, total_elements: 9, total_pages: 5, number: 0 });
    assert.deepEqual(json(await list('?size=2&page=9')), {
      data: [],
      page: { size: 2, total_elements: 9, total_pages: 5, number: 9 },
    });
  });
});

describe('GET /v1/payment-plans: errors', () => {
  it('answers 400 merchant_id_required for is_selected without merchant_id', async () => {
    const { list } = await setup();
    const res = await list('?is_selected=true');
    assert.equal(res.statusCode, 400);
    const body = json(res);
    assert.equal(body.code, 'merchant_id_required');
    assert.equal(body.errors[0].field, 'merchant_id');
  });

  for (const query of [
    '?size=0',
    '?size=1e3',
    '?page=-1',
    '?page=0.5',
    '?merchant_id=42',
    '?is_selected=maybe',
    '?card_brand=VI SA',
    `?card_brand=${'A'.repeat(33)}`,
    '?brand=VISA',
  ]) {
    it(`answers 400 validation_failed for ${query}`, async () => {
      const { list } = await setup();
      const res = await list(query);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
    });
  }
});

describe('GET /v1/payment-plans: security', () => {
  it('answers 401 without credentials', async () => {
    const { list } = await setup();
    assert.equal((await list('', {})).statusCode, 401);
  });

  it('answers the same 404 for a foreign merchant_id and an unknown one', async () => {
    const { list, o0 } = await setup();
    const foreign = await list(`?merchant_id=${o0}`);
    const unknown = await list(`?merchant_id=${uuid('d')}`);
    for (const res of [foreign, unknown]) {
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'merchant_not_found');
    }
    assert.equal(json(foreign).detail, json(unknown).detail);
  });

  it("shows the other customer its own plans and not Alpha's", async () => {
    const { app, world, list, plans } = await setup();
    const other = await loginAs(app, world.otherLogin);
    const theirs = ids(json(await list('?size=100', bearer(other.access_token))));
    assert.ok(theirs.includes(plans.foreign.id));
    assert.ok(!theirs.includes(plans.visa1Own.id));
  });

  it('defaults a merchant caller to itself, lets it name itself, and hides other merchants', async () => {
    const { app, world, list, plans, m0, m1, o0 } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m1 });
    const headers = apiKey(key.api_key);
    const own = sorted([plans.visa1.id, plans.visaIntl.id]);
    assert.deepEqual(selected(json(await list('?size=100', headers))), own);
    assert.deepEqual(ids(json(await list('?is_selected=true', headers))), own);
    assert.deepEqual(selected(json(await list(`?size=100&merchant_id=${m1.toUpperCase()}`, headers))), own);
    for (const other of [m0, o0, uuid('d')]) {
      const res = await list(`?merchant_id=${other}`, headers);
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'merchant_not_found');
    }
  });
});
