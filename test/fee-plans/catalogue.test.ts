/**
 * The fee-rule catalogue (GET/POST /v1/fee-rules): plans of a customer's own,
 * immutable, listed beside the platform's, duplicates refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { paymentPlans } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import { apiKey, appWithCatalogue, bulkAssign, feeRuleRequests, NEW_PLAN } from '../helpers/plans.js';
import { recordsOf } from '../helpers/records.js';

const h = useTestApp();
const db = () => h.db.current.database.db;
const setup = () => appWithCatalogue(h);
const { list, create, retire } = feeRuleRequests;
const { auditOf, eventsOf } = recordsOf(h);

const planCount = async (customerId: string) =>
  (await db().select().from(paymentPlans).where(eq(paymentPlans.customerId, customerId))).length;

describe('GET /v1/fee-rules', () => {
  it('lists platform plans and the caller customer’s own, with owner and status, never another customer’s', async () => {
    const { app, headers, plans } = await setup();
    const res = await list(app, headers, '?size=100');
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    const byId = new Map(body.data.map((p: { id: string }) => [p.id, p]));
    assert.equal(byId.has(plans.foreign.id), false);
    assert.deepEqual(byId.get(plans.visa1Own.id), {
      id: plans.visa1Own.id,
      payment_method: 'CREDIT',
      term: 1,
      commission: 2.49,
      card_brand: 'VISA',
      has_installments: false,
      is_international: false,
      owner: 'CUSTOMER',
      status: 'ACTIVE',
    });
    assert.equal((byId.get(plans.visa1.id) as { owner: string }).owner, 'PLATFORM');
    assert.equal(body.page.total_elements, 7);
  });

  it('filters by owner, card_brand and payment_method (any case) and status', async () => {
    const { app, headers, plans } = await setup();
    const own = json(await list(app, headers, '?owner=CUSTOMER'));
    assert.deepEqual(
      own.data.map((p: { id: string }) => p.id),
      [plans.visa1Own.id],
    );
    const platform = json(await list(app, headers, '?owner=PLATFORM&card_brand=mastercard'));
    assert.deepEqual(
      platform.data.map((p: { id: string }) => p.id),
      [plans.master1.id],
    );
    const debit = json(await list(app, headers, '?payment_method=Debit'));
    assert.deepEqual(
      debit.data.map((p: { id: string }) => p.id),
      [plans.visaDebit.id],
    );
    assert.equal(json(await list(app, headers, '?status=RETIRED')).page.total_elements, 0);
  });

  it('answers 400 for a bad status or owner and an unknown parameter; 401 without credentials', async () => {
    const { app, headers } = await setup();
    for (const query of ['?status=GONE', '?owner=ME', '?statu=ACTIVE', '?size=0']) {
      const res = await list(app, headers, query);
      assert.equal(res.statusCode, 400, query);
      assert.equal(json(res).code, 'validation_failed');
    }
    assert.equal((await list(app, {})).statusCode, 401);
  });

  it('serves a merchant caller its customer’s catalogue', async () => {
    const { app, world, m0, plans } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const res = await list(app, apiKey(key.api_key), '?owner=CUSTOMER');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      json(res).data.map((p: { id: string }) => p.id),
      [plans.visa1Own.id],
    );
  });
});

describe('POST /v1/fee-rules', () => {
  it('creates a plan of the caller customer’s own, codes upper-cased, with its audit record and event', async () => {
    const { app, headers, world } = await setup();
    const res = await create(app, headers, NEW_PLAN);
    assert.equal(res.statusCode, 201, res.body);
    const plan = json(res);
    assert.deepEqual(
      { ...plan, id: undefined },
      {
        id: undefined,
        payment_method: 'CREDIT',
        term: 12,
        commission: 7.125,
        card_brand: 'VISA',
        has_installments: true,
        is_international: false,
        owner: 'CUSTOMER',
        status: 'ACTIVE',
      },
    );
    const [row] = await db().select().from(paymentPlans).where(eq(paymentPlans.id, plan.id));
    assert.equal(row!.customerId, world.customerId);
    assert.equal(row!.commission, '7.1250');
    const [audit] = await auditOf('payment_plan.created');
    assert.equal(audit!.targetId, plan.id);
    assert.equal(audit!.customerId, world.customerId);
    const [event] = await eventsOf('PAYMENT_PLAN_CREATED');
    assert.deepEqual(event!.data, plan);
    // The new plan is assignable at once.
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: world.merchantIds, payment_plan_ids: [plan.id] })).statusCode,
      201,
    );
  });

  it('refuses an identical ACTIVE plan with 409 naming it, and creates nothing', async () => {
    const { app, headers, world } = await setup();
    const first = json(await create(app, headers, NEW_PLAN));
    const before = await planCount(world.customerId);
    // The same six fields, written otherwise: another letter case, the commission with trailing digits.
    const res = await create(app, headers, { ...NEW_PLAN, card_brand: 'VISA', commission: 7.125 });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(json(res).code, 'payment_plan_exists');
    assert.equal(json(res).payment_plan_id, first.id);
    assert.equal(await planCount(world.customerId), before);
    assert.equal((await auditOf('payment_plan.created')).length, 1);
    // A plan differing in any one field is another plan.
    assert.equal((await create(app, headers, { ...NEW_PLAN, is_international: true })).statusCode, 201);
  });

  it('allows a plan identical to a retired one', async () => {
    const { app, headers } = await setup();
    const first = json(await create(app, headers, NEW_PLAN));
    assert.equal((await retire(app, headers, first.id)).statusCode, 204);
    const again = await create(app, headers, NEW_PLAN);
    assert.equal(again.statusCode, 201, again.body);
    assert.notEqual(json(again).id, first.id);
  });

  it('two identical plans created at once: one 201, one 409', async () => {
    const { app, headers, world } = await setup();
    const before = await planCount(world.customerId);
    const answers = await Promise.all([create(app, headers, NEW_PLAN), create(app, headers, NEW_PLAN)]);
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 409]);
    assert.equal(await planCount(world.customerId), before + 1);
  });

  for (const [name, body, field] of [
    ['a commission with 5 decimals', { ...NEW_PLAN, commission: 1.23456 }, 'commission'],
    ['a negative commission', { ...NEW_PLAN, commission: -1 }, 'commission'],
    ['a negative term', { ...NEW_PLAN, term: -1 }, 'term'],
    ['a code with a space', { ...NEW_PLAN, card_brand: 'VI SA' }, 'card_brand'],
    ['a missing field', { ...NEW_PLAN, is_international: undefined }, 'is_international'],
    ['an unknown field', { ...NEW_PLAN, customer_id: uuid('c') }, 'customer_id'],
    ['a commission as text', { ...NEW_PLAN, commission: '2.5' }, 'commission'],
  ] as const) {
    it(`answers 400 for ${name}, creating nothing`, async () => {
      const { app, headers, world } = await setup();
      const before = await planCount(world.customerId);
      const res = await create(app, headers, body);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, 'validation_failed');
      assert.ok(
        json(res).errors.some((e: { field: string }) => e.field === field),
        JSON.stringify(json(res).errors),
      );
      assert.equal(await planCount(world.customerId), before);
    });
  }

  it('is refused to merchant callers (403) and read-only keys (403), creating nothing', async () => {
    const { app, world, m0 } = await setup();
    const merchantKey = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const readOnly = await issueKey(
      app,
      { user: 'ro@alpha.test', customerId: world.customerId },
      { access: 'read_only' },
    );
    const before = await planCount(world.customerId);
    const asMerchant = await create(app, apiKey(merchantKey.api_key), NEW_PLAN);
    assert.equal(asMerchant.statusCode, 403);
    assert.equal(json(asMerchant).code, 'forbidden');
    const asReadOnly = await create(app, apiKey(readOnly.api_key), NEW_PLAN);
    assert.equal(asReadOnly.statusCode, 403);
    assert.equal(json(asReadOnly).code, 'read_only_key');
    assert.equal((await create(app, {}, NEW_PLAN)).statusCode, 401);
    assert.equal(await planCount(world.customerId), before);
  });
});
