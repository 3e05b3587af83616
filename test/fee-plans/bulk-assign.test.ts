import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq, like } from 'drizzle-orm';
import { auditEvents, merchantPaymentPlans } from '../../src/db/schema.js';
import { type Injected, json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  assignmentSnapshot,
  bulkAssign,
  bulkAssignAll,
  plansByMerchant,
  seedCatalogue,
} from '../helpers/plans.js';

const h = useTestApp();
const database = () => h.db.current.database;
const sorted = (ids: string[]) => [...ids].sort();

async function setup() {
  const app = await h.app();
  return { app, ...(await seedCatalogue(app)) };
}

function assertCreated(res: Injected) {
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.body, '');
  assert.equal(res.headers['content-type'], undefined);
}

/** A refused request answers a problem document and changes nothing, not even the audit trail. */
async function assertRefused(res: Injected, status: number, code: string, before: string[]) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = json(res);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.request_id, 'string');
  assert.deepEqual(await assignmentSnapshot(database()), before, 'merchant_payment_plans is unchanged');
  const audits = await database().db.select().from(auditEvents).where(like(auditEvents.action, 'fee_rules.%'));
  assert.equal(audits.length, 0, 'no audit record');
  return body;
}

describe('POST /v1/fee-rules/bulk-assign: happy', () => {
  it('replaces only the plans of the same kinds as the plans sent, and keeps the rest', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    const before = await plansByMerchant(database());
    // visa1Own replaces visa1 (same kind); visa6 replaces visa3 (installments, another term).
    assertCreated(
      await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa1Own.id, plans.visa6.id] }),
    );
    const after = await plansByMerchant(database());
    assert.deepEqual(after.get(m0), sorted([plans.visa1Own.id, plans.visa6.id, plans.visaDebit.id, plans.master1.id]));
    assert.deepEqual(after.get(m1), before.get(m1), 'a merchant not named is untouched');
  });

  it('treats international and installments as part of the kind', async () => {
    const { app, headers, plans, m1 } = await setup();
    // visa3 (installments) must not replace visa1 (single payment) nor visaIntl (international).
    assertCreated(await bulkAssign(app, headers, { merchant_ids: [m1], payment_plan_ids: [plans.visa3.id] }));
    assert.deepEqual(
      (await plansByMerchant(database())).get(m1),
      sorted([plans.visa1.id, plans.visaIntl.id, plans.visa3.id]),
    );
  });

  it('assigns several plans of one kind with different terms together', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    assertCreated(
      await bulkAssign(app, headers, { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa3.id, plans.visa6.id] }),
    );
    const after = await plansByMerchant(database());
    assert.deepEqual(
      after.get(m0),
      sorted([plans.visa1.id, plans.visa3.id, plans.visa6.id, plans.visaDebit.id, plans.master1.id]),
    );
    assert.deepEqual(after.get(m1), sorted([plans.visa1.id, plans.visaIntl.id, plans.visa3.id, plans.visa6.id]));
  });

  it('keeps a plan that is sent again as it is', async () => {
    const { app, headers, plans, m0 } = await setup();
    const [held] = await database()
      .db.select()
      .from(merchantPaymentPlans)
      .where(eq(merchantPaymentPlans.paymentPlanId, plans.visaDebit.id));
    const before = await assignmentSnapshot(database());
    assertCreated(
      await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa1.id, plans.visaDebit.id] }),
    );
    assert.deepEqual(await assignmentSnapshot(database()), before);
    const [again] = await database()
      .db.select()
      .from(merchantPaymentPlans)
      .where(eq(merchantPaymentPlans.paymentPlanId, plans.visaDebit.id));
    assert.deepEqual(again!.assignedAt, held!.assignedAt);
  });

  it('ignores duplicate ids, whatever their case', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await bulkAssign(app, headers, {
      merchant_ids: [m0, m0.toUpperCase(), m0],
      payment_plan_ids: [plans.visa6.id, plans.visa6.id.toUpperCase()],
    });
    assertCreated(res);
    assert.ok((await plansByMerchant(database())).get(m0)!.includes(plans.visa6.id));
  });

  it('records the caller, the plans and the merchant count in the audit trail', async () => {
    const { app, headers, plans, m0, m1, world } = await setup();
    // visa6 replaces m0's visa3 (same kind), and is added to both.
    const res = await bulkAssign(app, headers, { merchant_ids: [m0, m1, m0], payment_plan_ids: [plans.visa6.id] });
    assertCreated(res);
    const [audit, ...more] = await database()
      .db.select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'fee_rules.bulk_assign'));
    assert.equal(more.length, 0);
    assert.equal(audit!.actorType, 'user');
    assert.ok(audit!.actorId);
    assert.equal(audit!.customerId, world.customerId);
    assert.equal(audit!.requestId, res.headers['x-request-id']);
    assert.deepEqual(audit!.details, { payment_plan_ids: [plans.visa6.id], merchant_count: 2, added: 2, removed: 1 });
  });

  it('accepts a customer API key', async () => {
    const { app, plans, m0, world } = await setup();
    const key = await issueKey(app, { user: 'integration@alpha.test', customerId: world.customerId });
    assertCreated(
      await bulkAssign(app, apiKey(key.api_key), { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
    );
    const [audit] = await database()
      .db.select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'fee_rules.bulk_assign'));
    assert.deepEqual({ type: audit!.actorType, id: audit!.actorId }, { type: 'api_key', id: key.id });
  });
});

describe('POST /v1/fee-rules/bulk-assign/all: happy', () => {
  it("reaches every merchant of the caller's customer and no other", async () => {
    const { app, headers, plans, m0, m1, o0, o1 } = await setup();
    const before = await plansByMerchant(database());
    assertCreated(await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa1Own.id] }));
    const after = await plansByMerchant(database());
    assert.deepEqual(after.get(m0), sorted([plans.visa1Own.id, plans.visa3.id, plans.visaDebit.id, plans.master1.id]));
    assert.deepEqual(after.get(m1), sorted([plans.visa1Own.id, plans.visaIntl.id]));
    assert.deepEqual(after.get(o0), before.get(o0));
    assert.deepEqual(after.get(o1), before.get(o1));
    const [audit] = await database()
      .db.select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'fee_rules.bulk_assign_all'));
    assert.deepEqual(audit!.details, {
      payment_plan_ids: [plans.visa1Own.id],
      merchant_count: 'all',
      added: 2,
      removed: 2,
    });
  });

  it('reaches a merchant that holds no plan yet', async () => {
    const { app, headers, plans, world } = await setup();
    const fresh = uuid('d');
    await app.services.importer.importDocument({
      merchants: [{ id: fresh, customer_id: world.customerId, name: 'New shop' }],
    });
    assertCreated(await bulkAssignAll(app, headers, { payment_plan_ids: [plans.master1.id, plans.visaDebit.id] }));
    assert.deepEqual((await plansByMerchant(database())).get(fresh), sorted([plans.master1.id, plans.visaDebit.id]));
  });
});

describe('POST /v1/fee-rules/bulk-assign: errors', () => {
  for (const [name, body] of [
    ['missing', {}],
    ['empty', { merchant_ids: [] }],
  ] as const) {
    it(`answers 400 pointing to /all when merchant_ids is ${name}`, async () => {
      const { app, headers, plans } = await setup();
      const before = await assignmentSnapshot(database());
      const problem = await assertRefused(
        await bulkAssign(app, headers, { ...body, payment_plan_ids: [plans.visa6.id] }),
        400,
        'merchant_ids_required',
        before,
      );
      assert.match(problem.detail, /\/v1\/fee-rules\/bulk-assign\/all/);
      assert.equal(problem.errors[0].field, 'merchant_ids');
    });
  }

  const invalidBodies: Array<[string, (c: Awaited<ReturnType<typeof setup>>) => unknown, string]> = [
    ['no payment_plan_ids', (c) => ({ merchant_ids: [c.m0] }), 'payment_plan_ids'],
    ['empty payment_plan_ids', (c) => ({ merchant_ids: [c.m0], payment_plan_ids: [] }), 'payment_plan_ids'],
    [
      '201 payment_plan_ids',
      (c) => ({ merchant_ids: [c.m0], payment_plan_ids: Array.from({ length: 201 }, () => c.plans.visa6.id) }),
      'payment_plan_ids',
    ],
    [
      '10,001 merchant_ids',
      (c) => ({ merchant_ids: Array.from({ length: 10_001 }, () => c.m0), payment_plan_ids: [c.plans.visa6.id] }),
      'merchant_ids',
    ],
    [
      'a plan id that is not a UUID',
      (c) => ({ merchant_ids: [c.m0], payment_plan_ids: ['visa'] }),
      'payment_plan_ids[0]',
    ],
    [
      'a merchant id in urn:uuid form',
      (c) => ({ merchant_ids: [`urn:uuid:${c.m0}`], payment_plan_ids: [c.plans.visa6.id] }),
      'merchant_ids[0]',
    ],
    [
      'a lone string for merchant_ids',
      (c) => ({ merchant_ids: c.m0, payment_plan_ids: [c.plans.visa6.id] }),
      'merchant_ids',
    ],
    ['an unknown field', (c) => ({ merchant_ids: [c.m0], payment_plan_ids: [c.plans.visa6.id], all: true }), 'all'],
  ];
  for (const [name, bodyOf, field] of invalidBodies) {
    it(`answers 400 validation_failed for ${name}`, async () => {
      const c = await setup();
      const before = await assignmentSnapshot(database());
      const problem = await assertRefused(
        await bulkAssign(c.app, c.headers, bodyOf(c)),
        400,
        'validation_failed',
        before,
      );
      assert.equal(problem.errors[0].field, field);
    });
  }

  it('accepts exactly 200 plan ids and 10,000 merchant ids (duplicates included)', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await bulkAssign(app, headers, {
      merchant_ids: Array.from({ length: 10_000 }, () => m0),
      payment_plan_ids: Array.from({ length: 200 }, () => plans.visa6.id),
    });
    assertCreated(res);
  });

  it('answers 400 for malformed JSON and 415 for a body that is not JSON', async () => {
    const { app, headers } = await setup();
    const before = await assignmentSnapshot(database());
    const broken = await app.inject({
      method: 'POST',
      url: '/v1/fee-rules/bulk-assign',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"merchant_ids":',
    });
    await assertRefused(broken, 400, 'malformed_json', before);
    const text = await app.inject({
      method: 'POST',
      url: '/v1/fee-rules/bulk-assign',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: 'x',
    });
    await assertRefused(text, 415, 'unsupported_media_type', before);
  });

  it('answers 422 unknown_payment_plans listing unknown and foreign plans, in the order sent', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    const unknown = uuid('e');
    const res = await bulkAssign(app, headers, {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visa6.id, unknown, plans.foreign.id, unknown],
    });
    const problem = await assertRefused(res, 422, 'unknown_payment_plans', before);
    assert.deepEqual(problem.payment_plan_ids, [unknown, plans.foreign.id]);
    assert.equal(problem.instance, '/v1/fee-rules/bulk-assign');
  });

  it('answers 422 unknown_merchants listing unknown and foreign merchants', async () => {
    const { app, headers, plans, m0, o0 } = await setup();
    const before = await assignmentSnapshot(database());
    const unknown = uuid('d');
    const res = await bulkAssign(app, headers, { merchant_ids: [m0, o0, unknown], payment_plan_ids: [plans.visa6.id] });
    const problem = await assertRefused(res, 422, 'unknown_merchants', before);
    assert.deepEqual(problem.merchant_ids, [o0, unknown]);
  });

  it('answers 422 conflicting_payment_plans for two plans of the same kind and term', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    const res = await bulkAssign(app, headers, {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visa1.id, plans.visa6.id, plans.visa1Own.id],
    });
    const problem = await assertRefused(res, 422, 'conflicting_payment_plans', before);
    assert.deepEqual(problem.conflicts, [{ payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] }]);
    assert.deepEqual(sorted(problem.payment_plan_ids), sorted([plans.visa1.id, plans.visa1Own.id]));
  });
});

describe('POST /v1/fee-rules/bulk-assign/all: errors', () => {
  it('answers 400 when merchant_ids is sent', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    const problem = await assertRefused(
      await bulkAssignAll(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      400,
      'validation_failed',
      before,
    );
    assert.equal(problem.errors[0].field, 'merchant_ids');
  });

  it('answers 400 without payment_plan_ids', async () => {
    const { app, headers } = await setup();
    const before = await assignmentSnapshot(database());
    await assertRefused(await bulkAssignAll(app, headers, {}), 400, 'validation_failed', before);
  });

  it('answers 422 for unknown and for conflicting plans', async () => {
    const { app, headers, plans } = await setup();
    const before = await assignmentSnapshot(database());
    const unknown = await assertRefused(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.foreign.id] }),
      422,
      'unknown_payment_plans',
      before,
    );
    assert.deepEqual(unknown.payment_plan_ids, [plans.foreign.id]);
    await assertRefused(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] }),
      422,
      'conflicting_payment_plans',
      before,
    );
  });
});

describe('POST /v1/fee-rules/bulk-assign, /all: security', () => {
  it('answers 401 without credentials or with an unknown token', async () => {
    const { app, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    for (const headers of [{}, { authorization: 'Bearer fga_unknown' }]) {
      const res = await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] });
      await assertRefused(res, 401, res.json().code, before);
      assert.ok(res.headers['www-authenticate']);
      await assertRefused(
        await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }),
        401,
        res.json().code,
        before,
      );
    }
  });

  it("cannot reach another customer's merchants, even with its own plans", async () => {
    const { app, headers, plans, o0 } = await setup();
    const before = await assignmentSnapshot(database());
    const problem = await assertRefused(
      await bulkAssign(app, headers, { merchant_ids: [o0], payment_plan_ids: [plans.visa6.id] }),
      422,
      'unknown_merchants',
      before,
    );
    assert.deepEqual(problem.merchant_ids, [o0]);
  });

  it('answers 403 to a merchant caller on both endpoints, before looking at the body', async () => {
    const { app, plans, m0, world } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const before = await assignmentSnapshot(database());
    const headers = apiKey(key.api_key);
    await assertRefused(
      await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      403,
      'forbidden',
      before,
    );
    await assertRefused(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }),
      403,
      'forbidden',
      before,
    );
    await assertRefused(await bulkAssign(app, headers, { nonsense: true }), 403, 'forbidden', before);
  });
});
