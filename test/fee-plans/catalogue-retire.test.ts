/** DELETE /v1/fee-rules/{id}: a plan retired without touching the merchants that hold it, and who may retire it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { paymentPlans } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  appWithCatalogue,
  assignmentSnapshot,
  bulkAssign,
  feeRuleRequests,
  feeRulesAt,
  NEW_PLAN,
} from '../helpers/plans.js';
import { recordsOf } from '../helpers/records.js';

const h = useTestApp();
const db = () => h.db.current.database.db;
const setup = () => appWithCatalogue(h);
const { list, create, retire, assignOne } = feeRuleRequests;
const { auditOf, eventsOf } = recordsOf(h);

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
