/**
 * The fee-rule catalogue (GET/POST /v1/fee-rules, DELETE /v1/fee-rules/{id}) and
 * one merchant's rules (POST /v1/merchants/{id}/fee-rules): plans of a
 * customer's own, immutable, duplicates refused, retired without touching the
 * merchants that hold them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { auditEvents, domainEvents, paymentPlans } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  assignmentSnapshot,
  bulkAssign,
  type Credentials,
  feeRulesAt,
  seedCatalogue,
} from '../helpers/plans.js';

const h = useTestApp();
const db = () => h.db.current.database.db;

const NEW_PLAN = {
  payment_method: 'credit',
  card_brand: 'Visa',
  term: 12,
  commission: 7.125,
  has_installments: true,
  is_international: false,
};

const list = (app: FastifyInstance, headers: Credentials, query = '') =>
  app.inject({ method: 'GET', url: `/v1/fee-rules${query}`, headers });
const create = (app: FastifyInstance, headers: Credentials, payload: unknown) =>
  app.inject({ method: 'POST', url: '/v1/fee-rules', headers, payload: payload as object });
const retire = (app: FastifyInstance, headers: Credentials, id: string) =>
  app.inject({ method: 'DELETE', url: `/v1/fee-rules/${id}`, headers });
const assignOne = (app: FastifyInstance, headers: Credentials, merchantId: string, payload: unknown, query = '') =>
  app.inject({
    method: 'POST',
    url: `/v1/merchants/${merchantId}/fee-rules${query}`,
    headers,
    payload: payload as object,
  });

const auditOf = (action: string) => db().select().from(auditEvents).where(eq(auditEvents.action, action));
const eventsOf = (type: string) => db().select().from(domainEvents).where(eq(domainEvents.type, type));
const planCount = async (customerId: string) =>
  (await db().select().from(paymentPlans).where(eq(paymentPlans.customerId, customerId))).length;

async function setup() {
  const app = await h.app();
  return { app, ...(await seedCatalogue(app)) };
}

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

describe('DELETE /v1/fee-rules/{id}', () => {
  it('retires the plan: listed as RETIRED only, kept by the merchants that hold it, no longer assignable', async () => {
    const { app, headers, world, m0, m1 } = await setup();
    const plan = json(await create(app, headers, NEW_PLAN));
    assert.equal((await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plan.id] })).statusCode, 201);
    const res = await retire(app, headers, plan.id);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    const active = json(await list(app, headers, '?owner=CUSTOMER'));
    assert.equal(
      active.data.some((p: { id: string }) => p.id === plan.id),
      false,
    );
    const retired = json(await list(app, headers, '?status=RETIRED'));
    assert.deepEqual(
      retired.data.map((p: { id: string; status: string }) => [p.id, p.status]),
      [[plan.id, 'RETIRED']],
    );
    // m0 keeps it: a fee never changes under a merchant by a catalogue edit.
    const held = json(await feeRulesAt(app, headers, m0));
    assert.ok(held.data.some((p: { id: string }) => p.id === plan.id));
    // Assigning it again is refused, for the merchant that holds it and any other, and changes nothing.
    const before = await assignmentSnapshot(h.db.current.database);
    for (const merchant of [m0, m1]) {
      const refused = await bulkAssign(app, headers, { merchant_ids: [merchant], payment_plan_ids: [plan.id] });
      assert.equal(refused.statusCode, 422, refused.body);
      assert.equal(json(refused).code, 'retired_payment_plans');
      assert.deepEqual(json(refused).payment_plan_ids, [plan.id]);
    }
    const all = await app.inject({
      method: 'POST',
      url: '/v1/fee-rules/bulk-assign/all',
      headers,
      payload: { payment_plan_ids: [plan.id] },
    });
    assert.equal(json(all).code, 'retired_payment_plans');
    assert.equal(
      json(await assignOne(app, headers, m1, { payment_plan_ids: [plan.id] })).code,
      'retired_payment_plans',
    );
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), before);
    const [audit] = await auditOf('payment_plan.retired');
    assert.equal(audit!.targetId, plan.id);
    const [event] = await eventsOf('PAYMENT_PLAN_RETIRED');
    assert.equal((event!.data as { status: string }).status, 'RETIRED');
    assert.equal(audit!.customerId, world.customerId);
  });

  it('is idempotent: again 204, one audit record and one event', async () => {
    const { app, headers } = await setup();
    const plan = json(await create(app, headers, NEW_PLAN));
    assert.equal((await retire(app, headers, plan.id)).statusCode, 204);
    assert.equal((await retire(app, headers, plan.id.toUpperCase())).statusCode, 204);
    assert.equal((await auditOf('payment_plan.retired')).length, 1);
    assert.equal((await eventsOf('PAYMENT_PLAN_RETIRED')).length, 1);
  });

  it('answers 404 for a platform plan, another customer’s plan and an unknown id, changing nothing', async () => {
    const { app, headers, plans } = await setup();
    for (const id of [plans.visa1.id, plans.foreign.id, uuid('e')]) {
      const res = await retire(app, headers, id);
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(json(res).code, 'payment_plan_not_found');
    }
    const statuses = await db()
      .select({ status: paymentPlans.status })
      .from(paymentPlans)
      .where(and(eq(paymentPlans.status, 'RETIRED')));
    assert.deepEqual(statuses, []);
  });

  it('is refused to merchant callers (403), changing nothing', async () => {
    const { app, world, m0, plans } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const res = await retire(app, apiKey(key.api_key), plans.visa1Own.id);
    assert.equal(res.statusCode, 403);
    const [row] = await db().select().from(paymentPlans).where(eq(paymentPlans.id, plans.visa1Own.id));
    assert.equal(row!.status, 'ACTIVE');
  });
});

describe('POST /v1/merchants/{id}/fee-rules', () => {
  it('assigns to the one merchant by the replacement rule (201, no body), with its audit record', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    const others = json(await feeRulesAt(app, headers, m1));
    const res = await assignOne(app, headers, m0, { payment_plan_ids: [plans.visa6.id, plans.visa1Own.id] });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.body, '');
    const held = json(await feeRulesAt(app, headers, m0));
    assert.deepEqual(
      new Set(held.data.map((p: { id: string }) => p.id)),
      new Set([plans.master1.id, plans.visa1Own.id, plans.visa6.id, plans.visaDebit.id]),
    );
    assert.deepEqual(json(await feeRulesAt(app, headers, m1)).data, others.data, 'no other merchant changed');
    const [audit] = await auditOf('fee_rules.bulk_assign');
    assert.equal((audit!.details as { merchant_count: number }).merchant_count, 1);
  });

  it('previews with dry_run=true and writes nothing', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(h.db.current.database);
    const res = await assignOne(app, headers, m0, { payment_plan_ids: [plans.visa6.id] }, '?dry_run=true');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), {
      dry_run: true,
      merchants: 1,
      merchants_changed: 1,
      assignments_added: 1,
      assignments_removed: 1,
      changes: [{ merchant_id: m0, added: [plans.visa6.id], removed: [plans.visa3.id] }],
    });
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), before);
  });

  it('answers 404 for another customer’s or an unknown merchant, 422 for a foreign plan, changing nothing', async () => {
    const { app, headers, plans, o0, m0 } = await setup();
    const before = await assignmentSnapshot(h.db.current.database);
    for (const merchant of [o0, uuid('d')]) {
      const res = await assignOne(app, headers, merchant, { payment_plan_ids: [plans.visa6.id] });
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(json(res).code, 'merchant_not_found');
    }
    const foreign = await assignOne(app, headers, m0, { payment_plan_ids: [plans.foreign.id] });
    assert.equal(foreign.statusCode, 422);
    assert.equal(json(foreign).code, 'unknown_payment_plans');
    const conflicting = await assignOne(app, headers, m0, { payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] });
    assert.equal(json(conflicting).code, 'conflicting_payment_plans');
    const named = await assignOne(app, headers, m0, { payment_plan_ids: [plans.visa6.id], merchant_ids: [m0] });
    assert.equal(named.statusCode, 400);
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), before);
  });

  it('is refused to merchant callers, even for themselves (403)', async () => {
    const { app, world, plans, m0 } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const res = await assignOne(app, apiKey(key.api_key), m0, { payment_plan_ids: [plans.visa6.id] });
    assert.equal(res.statusCode, 403);
    assert.equal(json(res).code, 'forbidden');
  });
});
