/** Scheduled fee-rule changes applied at their instant, once, in one transaction, dated at the instant, with their records. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { merchantPaymentPlanHistory, merchantPaymentPlans } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { uuid } from '../helpers/fixtures.js';
import { patchMerchant } from '../helpers/merchants.js';
import { bulkAssign, bulkAssignAll, feeRulesAt } from '../helpers/plans.js';
import { inSeconds, listChanges, scheduledChangesOn, scheduleIn1h } from '../helpers/scheduled-changes.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const { db, auditOf, eventsOf, makeDue, statusOf, setup } = scheduledChangesOn(h);

describe('scheduling and applying', () => {
  it('answers 202 with the change, applies it at the instant dated at the instant, once, with its records', async () => {
    const { app, headers, plans, m0, m1, world } = await setup();
    const before = json(await feeRulesAt(app, headers, m0));
    const effectiveAt = new Date(Math.ceil((Date.now() + 5600) / 1000) * 1000);
    const res = await bulkAssign(app, headers, {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visa6.id],
      effective_at: effectiveAt.toISOString(),
    });
    assert.equal(res.statusCode, 202, res.body);
    const scheduledAt = Date.parse(json(res).scheduled_change.effective_at);
    assert.ok(scheduledAt > Date.now());
    const change = json(res).scheduled_change;
    assert.deepEqual(Object.keys(change).sort(), [
      'applied_at',
      'cancelled_at',
      'create_date',
      'effective_at',
      'id',
      'kind',
      'merchant_ids',
      'outcome',
      'payment_plan_ids',
      'status',
    ]);
    assert.equal(change.kind, 'BULK');
    assert.deepEqual(change.merchant_ids, [m0]);
    assert.deepEqual(change.payment_plan_ids, [plans.visa6.id]);
    assert.equal(change.status, 'PENDING');
    assert.equal((await auditOf('fee_rules.scheduled')).length, 1);
    assert.equal((await eventsOf('FEE_RULES_SCHEDULED')).length, 1);
    // Nothing changed yet; a future instant projects the change.
    assert.deepEqual(json(await feeRulesAt(app, headers, m0)).data, before.data);
    const projected = json(await feeRulesAt(app, headers, m0, new Date(scheduledAt + 1000)));
    const visa6 = projected.data.find((p: { id: string }) => p.id === plans.visa6.id);
    assert.equal(visa6.assigned_at, change.effective_at);
    assert.equal(
      projected.data.some((p: { id: string }) => p.id === plans.visa3.id),
      false,
    );
    assert.deepEqual(json(await feeRulesAt(app, headers, m0, new Date(scheduledAt - 1))).data, before.data);

    await waitFor(async () => (await statusOf(change.id)).status === 'APPLIED', 'applied at its instant', {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
    const applied = await statusOf(change.id);
    assert.ok(applied.appliedAt!.getTime() >= scheduledAt, 'not before its instant');
    assert.ok(applied.appliedAt!.getTime() - scheduledAt < 5000, 'within 5 s of its instant');
    const [row] = await db()
      .select()
      .from(merchantPaymentPlans)
      .where(eq(merchantPaymentPlans.paymentPlanId, plans.visa6.id));
    assert.equal(row!.assignedAt.toISOString(), change.effective_at, 'assigned_at = effective_at exactly');
    const [history] = await db().select().from(merchantPaymentPlanHistory);
    assert.equal(history!.paymentPlanId, plans.visa3.id);
    assert.equal(history!.removedAt.toISOString(), change.effective_at, 'the replaced plan ended at the instant');
    // History exact on either side of the instant, and the projection matched what happened.
    assert.deepEqual(json(await feeRulesAt(app, headers, m0, new Date(scheduledAt - 1))).data, before.data);
    assert.deepEqual(json(await feeRulesAt(app, headers, m0, new Date(scheduledAt + 1000))).data, projected.data);
    assert.deepEqual(
      json(await feeRulesAt(app, headers, m1)).data.map((p: { id: string }) => p.id),
      [plans.visa1.id, plans.visaIntl.id],
    );
    const listed = json(await listChanges(app, headers, '?status=APPLIED'));
    assert.equal(listed.data[0].id, change.id);
    assert.deepEqual(listed.data[0].outcome, {
      merchants: 1,
      merchants_changed: 1,
      assignments_added: 1,
      assignments_removed: 1,
      skipped_payment_plan_ids: [],
      skipped_merchant_ids: [],
    });
    const [audit] = await auditOf('fee_rules.schedule_applied');
    assert.equal(audit!.actorType, 'user', 'attributed to who scheduled it');
    assert.equal(audit!.customerId, world.customerId);
    assert.equal(audit!.requestId, (await auditOf('fee_rules.scheduled'))[0]!.requestId);
    const [event] = await eventsOf('FEE_RULES_SCHEDULE_APPLIED');
    assert.deepEqual((event!.data as { changes: unknown }).changes, [
      { merchant_id: m0, added: [plans.visa6.id], removed: [plans.visa3.id] },
    ]);
    // Once: a later tick applies nothing more.
    assert.equal(await app.services.scheduledChanges.applyDue(), false);
    assert.equal((await auditOf('fee_rules.schedule_applied')).length, 1);
  });

  it('ALL applies to the merchants of the moment it applies, and skips plans retired meanwhile, reporting them', async () => {
    const { app, headers, plans, world } = await setup();
    const own = json(
      await app.inject({
        method: 'POST',
        url: '/v1/fee-rules',
        headers,
        payload: {
          payment_method: 'CREDIT',
          card_brand: 'ELO',
          term: 1,
          commission: 3,
          has_installments: false,
          is_international: false,
        },
      }),
    );
    const res = await bulkAssignAll(app, headers, {
      payment_plan_ids: [plans.visa6.id, own.id],
      effective_at: inSeconds(3600),
    });
    assert.equal(res.statusCode, 202, res.body);
    const change = json(res).scheduled_change;
    assert.equal(change.kind, 'ALL');
    assert.equal(change.merchant_ids, null);
    assert.equal((await app.inject({ method: 'DELETE', url: `/v1/fee-rules/${own.id}`, headers })).statusCode, 204);
    const late = uuid('d');
    await app.services.importer.importDocument({
      merchants: [{ id: late, customer_id: world.customerId, name: 'Alpha late' }],
    });
    await makeDue(change.id);
    await waitFor(async () => (await statusOf(change.id)).status === 'APPLIED', 'applied', { timeoutMs: 5000 });
    const outcome = (await statusOf(change.id)).outcome as Record<string, unknown>;
    assert.deepEqual(outcome.skipped_payment_plan_ids, [own.id]);
    assert.equal(outcome.merchants, 3, 'the two merchants and the one added after scheduling');
    const held = await db().select().from(merchantPaymentPlans).where(eq(merchantPaymentPlans.paymentPlanId, own.id));
    assert.deepEqual(held, [], 'the retired plan was not assigned');
    assert.deepEqual(
      json(await feeRulesAt(app, headers, late)).data.map((p: { id: string }) => p.id),
      [plans.visa6.id],
    );
  });

  it('projects a pending change onto ACTIVE merchants only, as it applies, in fee-rules?at= ahead', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    assert.equal((await patchMerchant(app, headers, m1, { status: 'INACTIVE' })).statusCode, 200);
    const res = await bulkAssignAll(app, headers, {
      payment_plan_ids: [plans.visa6.id],
      effective_at: inSeconds(3600),
    });
    const change = json(res).scheduled_change;
    const ahead = async (merchantId: string) =>
      json(await feeRulesAt(app, headers, merchantId, inSeconds(7200))).data.map((p: { id: string }) => p.id);
    assert.ok((await ahead(m0)).includes(plans.visa6.id), 'the ACTIVE merchant will hold it');
    assert.ok(!(await ahead(m1)).includes(plans.visa6.id), 'the INACTIVE one will not');
    await makeDue(change.id);
    await waitFor(async () => (await statusOf(change.id)).status === 'APPLIED', 'applied', { timeoutMs: 5000 });
    const now = async (merchantId: string) =>
      json(await feeRulesAt(app, headers, merchantId)).data.map((p: { id: string }) => p.id);
    assert.ok((await now(m0)).includes(plans.visa6.id));
    assert.ok(!(await now(m1)).includes(plans.visa6.id), 'as projected');
  });

  it('applies a customer’s changes in the order of their instants', async () => {
    const { app, headers, plans, m0 } = await setup();
    const first = await scheduleIn1h(app, headers, m0, plans.visa6.id);
    const second = await scheduleIn1h(app, headers, m0, plans.visa3.id);
    await makeDue(second.id, 100);
    await makeDue(first.id, 200);
    await waitFor(async () => (await statusOf(second.id)).status === 'APPLIED', 'both applied', { timeoutMs: 5000 });
    assert.ok((await statusOf(first.id)).appliedAt! <= (await statusOf(second.id)).appliedAt!);
    const held = json(await feeRulesAt(app, headers, m0)).data.map((p: { id: string }) => p.id);
    assert.ok(held.includes(plans.visa3.id) && !held.includes(plans.visa6.id), 'the later change wins');
  });
});
