/** POST /v1/fee-rules/bulk-assign and /all: which plans each merchant ends up with, and the audit trail of it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { auditEvents, merchantPaymentPlans } from '../../src/db/schema.js';
import { useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  assignmentSnapshot,
  bulkAssign,
  bulkAssignAll,
  plansByMerchant,
  appWithCatalogue,
  assertCreated,
  sorted,
} from '../helpers/plans.js';

const h = useTestApp();
const database = () => h.db.current.database;
const setup = () => appWithCatalogue(h);

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
