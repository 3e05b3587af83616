/** GET /v1/merchants/{id}/fee-rules?at=: the plans a merchant held at an instant (docs/fee-rules-history.md). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { merchantPaymentPlanHistory, merchantPaymentPlans, paymentPlans } from '../../src/db/schema.js';
import { sqlState } from '../../src/db/database.js';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import { apiKey, bulkAssign, feeRulesAt, seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();
const database = () => h.db.current.database;
/** Times are kept to the millisecond: a pause makes "before" and "after" distinct instants. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

async function setup() {
  const app = await h.app();
  return { app, ...(await seedCatalogue(app)) };
}

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((p) => p.id);

describe('GET /v1/merchants/{id}/fee-rules: happy', () => {
  it('answers the plans held now by default, ordered by card_brand, payment_method, is_international, has_installments, term', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await feeRulesAt(app, headers, m0);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.merchant_id, m0);
    assert.ok(Math.abs(Date.parse(body.at) - Date.now()) < 60_000);
    // MASTERCARD before VISA; CREDIT before DEBIT; single payment before installments.
    assert.deepEqual(ids(body as never), [plans.master1.id, plans.visa1.id, plans.visa3.id, plans.visaDebit.id]);
    const [row] = await database()
      .db.select()
      .from(merchantPaymentPlans)
      .where(eq(merchantPaymentPlans.paymentPlanId, plans.visa3.id));
    assert.deepEqual(body.data[2], {
      id: plans.visa3.id,
      payment_method: 'CREDIT',
      term: 3,
      commission: 3.89,
      card_brand: 'VISA',
      has_installments: true,
      is_international: false,
      assigned_at: row!.assignedAt.toISOString(),
    });
    assert.equal('is_selected' in body.data[0], false);
  });

  it('answers the plans held at a past instant, after they were replaced', async () => {
    const { app, headers, plans, m0 } = await setup();
    await tick();
    const before = new Date();
    await tick();
    // visa1Own replaces visa1; visa6 replaces visa3.
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa1Own.id, plans.visa6.id] }))
        .statusCode,
      201,
    );
    await tick();
    const after = new Date();
    const then = json(await feeRulesAt(app, headers, m0, before));
    assert.equal(then.at, before.toISOString());
    assert.deepEqual(ids(then as never), [plans.master1.id, plans.visa1.id, plans.visa3.id, plans.visaDebit.id]);
    const now = json(await feeRulesAt(app, headers, m0, after));
    assert.deepEqual(
      new Set(ids(now as never)),
      new Set([plans.master1.id, plans.visa1Own.id, plans.visa6.id, plans.visaDebit.id]),
    );
    // A kept plan keeps the instant it was first assigned.
    assert.equal(
      now.data.find((p: { id: string }) => p.id === plans.visaDebit.id).assigned_at,
      then.data.find((p: { id: string }) => p.id === plans.visaDebit.id).assigned_at,
    );
  });

  it('records when a replaced plan was assigned and removed, in the transaction of the change', async () => {
    const { app, headers, plans, m0 } = await setup();
    const [held] = await database()
      .db.select()
      .from(merchantPaymentPlans)
      .where(eq(merchantPaymentPlans.paymentPlanId, plans.visa3.id));
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] })).statusCode,
      201,
    );
    const history = await database().db.select().from(merchantPaymentPlanHistory);
    assert.equal(history.length, 1);
    assert.equal(history[0]!.merchantId, m0);
    assert.equal(history[0]!.paymentPlanId, plans.visa3.id);
    assert.deepEqual(history[0]!.assignedAt, held!.assignedAt);
    assert.ok(history[0]!.removedAt >= held!.assignedAt);
    const [added] = await database()
      .db.select()
      .from(merchantPaymentPlans)
      .where(eq(merchantPaymentPlans.paymentPlanId, plans.visa6.id));
    assert.deepEqual(added!.assignedAt, history[0]!.removedAt, 'the replacement starts when the replaced plan ends');
  });

  it('answers an empty list before any history', async () => {
    const { app, headers, m0, m1 } = await setup();
    for (const merchant of [m0, m1]) {
      const res = await feeRulesAt(app, headers, merchant, '2001-01-01T00:00:00Z');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), { merchant_id: merchant, at: '2001-01-01T00:00:00.000Z', data: [] });
    }
  });

  it('takes any time zone offset and answers in UTC', async () => {
    const { app, headers, m0 } = await setup();
    const res = await feeRulesAt(app, headers, m0, '2001-01-01T02:30:00+02:30');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).at, '2001-01-01T00:00:00.000Z');
  });

  it('serves a merchant caller its own plans', async () => {
    const { app, world, plans, m1 } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m1 });
    const res = await feeRulesAt(app, apiKey(key.api_key), m1.toUpperCase());
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).merchant_id, m1);
    assert.deepEqual(ids(json(res) as never), [plans.visa1.id, plans.visaIntl.id]);
  });
});

describe('GET /v1/merchants/{id}/fee-rules: errors', () => {
  for (const [name, at] of [
    ['not a date', 'yesterday'],
    ['without a time zone', '2026-01-01T00:00:00'],
    ['a date without a time', '2026-01-01'],
    ['an impossible date', '2026-02-30T00:00:00Z'],
    ['a leap second (valid RFC 3339, no instant of a Date)', '2016-12-31T23:59:60Z'],
    ['empty', ''],
  ]) {
    it(`answers 400 for an at that is ${name}`, async () => {
      const { app, headers, m0 } = await setup();
      const res = await feeRulesAt(app, headers, m0, at);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
      assert.equal(json(res).errors[0].field, 'at');
    });
  }

  it('answers 400 for a malformed merchant id and for an unknown query parameter', async () => {
    const { app, headers, m0 } = await setup();
    const malformed = await app.inject({ method: 'GET', url: '/v1/merchants/not-a-uuid/fee-rules', headers });
    assert.equal(malformed.statusCode, 400, malformed.body);
    const unknown = await app.inject({
      method: 'GET',
      url: `/v1/merchants/${m0}/fee-rules?when=2026-01-01T00:00:00Z`,
      headers,
    });
    assert.equal(unknown.statusCode, 400, unknown.body);
    assert.equal(json(unknown).errors[0].field, 'when');
  });

  it('keeps what history names: a replaced plan cannot be deleted, and assignments are not updated', async () => {
    const { app, headers, plans, m0 } = await setup();
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] })).statusCode,
      201,
    );
    const { db } = database();
    // visa3 is no longer assigned to anyone but m0 ever held it.
    await db.delete(merchantPaymentPlans).where(eq(merchantPaymentPlans.paymentPlanId, plans.visa3.id));
    await assert.rejects(
      db.delete(paymentPlans).where(eq(paymentPlans.id, plans.visa3.id)),
      (err) => sqlState(err) === '23503',
    );
    await assert.rejects(
      db.update(merchantPaymentPlans).set({ assignedAt: new Date(0) }),
      (err) => sqlState(err) === '23001',
    );
  });
});

describe('GET /v1/merchants/{id}/fee-rules: security', () => {
  it("answers 404 for another customer's merchant and for an unknown one, alike", async () => {
    const { app, headers, o0 } = await setup();
    for (const merchant of [o0, uuid('d')]) {
      const res = await feeRulesAt(app, headers, merchant);
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(json(res).code, 'merchant_not_found');
      assert.equal(json(res).detail, 'No merchant with this merchant_id.');
    }
  });

  it('answers 404 to a merchant caller asking for another merchant of its customer', async () => {
    const { app, world, m0, m1 } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m1 });
    const res = await feeRulesAt(app, apiKey(key.api_key), m0);
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(json(res).code, 'merchant_not_found');
  });

  it('answers 401 without credentials', async () => {
    const { app, m0 } = await setup();
    const res = await feeRulesAt(app, {}, m0);
    assert.equal(res.statusCode, 401, res.body);
  });
});
