/** POST /v1/merchants/{id}/fee-rules: one merchant's plans by the replacement rule, its preview, and its refusals. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import { apiKey, appWithCatalogue, assignmentSnapshot, feeRuleRequests, feeRulesAt } from '../helpers/plans.js';
import { recordsOf } from '../helpers/records.js';

const h = useTestApp();
const setup = () => appWithCatalogue(h);
const { assignOne } = feeRuleRequests;
const { auditOf } = recordsOf(h);

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
