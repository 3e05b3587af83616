/** Scheduled fee-rule changes across instances and restarts, each applied once, all or nothing; fee-rules?at= kept current. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { merchantPaymentPlanHistory, merchantPaymentPlans } from '../../src/db/schema.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { assignmentSnapshot, bulkAssign, feeRulesAt, seedCatalogue } from '../helpers/plans.js';
import { FAST, inSeconds, scheduledChangesOn, scheduleIn1h } from '../helpers/scheduled-changes.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const { db, rows, auditOf, eventsOf, makeDue, statusOf, setup } = scheduledChangesOn(h);

describe('applied once, all or nothing, across instances and restarts', () => {
  it('two instances racing for the same due changes apply each once', async () => {
    const { app, headers, plans, m0, m1 } = await setup({ scheduledChangesPollMs: 4000 });
    const other = await secondInstance(h, { scheduledChangesPollMs: 4000 });
    try {
      const ids: string[] = [];
      for (const [merchant, plan] of [
        [m0, plans.visa6.id],
        [m1, plans.visa3.id],
        [m0, plans.visa1Own.id],
      ] as const) {
        const res = await bulkAssign(app, headers, {
          merchant_ids: [merchant],
          payment_plan_ids: [plan],
          effective_at: inSeconds(3600),
        });
        ids.push(json(res).scheduled_change.id);
      }
      for (const id of ids) await makeDue(id);
      // Both instances tick at once, repeatedly, until nothing is due.
      for (let round = 0; round < 10; round++) {
        const [a, b] = await Promise.all([
          app.services.scheduledChanges.applyDue(),
          other.services.scheduledChanges.applyDue(),
        ]);
        if (!a && !b && (await rows()).every((r) => r.status === 'APPLIED')) break;
      }
      assert.deepEqual(
        (await rows()).map((r) => r.status),
        ['APPLIED', 'APPLIED', 'APPLIED'],
      );
      assert.equal((await auditOf('fee_rules.schedule_applied')).length, 3, 'each applied once');
      assert.equal((await eventsOf('FEE_RULES_SCHEDULE_APPLIED')).length, 3);
    } finally {
      await other.close();
    }
  });

  it('a transaction that fails while applying changes nothing; the change applies once it can', async () => {
    const { app, headers, plans, m0 } = await setup({ scheduledChangesPollMs: 4000 });
    const before = await assignmentSnapshot(h.db.current.database);
    const change = await scheduleIn1h(app, headers, m0, plans.visa6.id);
    // The database refuses the change's last write, after the replacement ran: the whole transaction must go.
    await db().execute(
      sql.raw(`CREATE FUNCTION fail_applying() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure while applying'; END $$`),
    );
    await db().execute(
      sql.raw(`CREATE TRIGGER fail_applying AFTER UPDATE ON scheduled_fee_rule_changes
        FOR EACH ROW WHEN (NEW.status = 'APPLIED') EXECUTE FUNCTION fail_applying()`),
    );
    await makeDue(change.id);
    try {
      await assert.rejects(app.services.scheduledChanges.applyDue());
      assert.equal((await statusOf(change.id)).status, 'PENDING');
      assert.deepEqual(await assignmentSnapshot(h.db.current.database), before, 'no assignment of a failed change');
      assert.deepEqual(await db().select().from(merchantPaymentPlanHistory), []);
      assert.equal((await auditOf('fee_rules.schedule_applied')).length, 0);
      assert.equal((await eventsOf('FEE_RULES_SCHEDULE_APPLIED')).length, 0);
    } finally {
      // Whatever the assertions find, later tests must not inherit the failure.
      await db().execute(sql.raw('DROP TRIGGER fail_applying ON scheduled_fee_rule_changes'));
      await db().execute(sql.raw('DROP FUNCTION fail_applying()'));
    }
    // This tick or the instance's own worker applies it.
    await app.services.scheduledChanges.applyDue();
    await waitFor(async () => (await statusOf(change.id)).status === 'APPLIED', 'applied once it can');
    assert.notDeepEqual(await assignmentSnapshot(h.db.current.database), before);
    assert.equal((await auditOf('fee_rules.schedule_applied')).length, 1);
  });

  it('a change whose instant passed while no instance ran applies at the next start, dated at its instant', async () => {
    const first = await h.app(FAST);
    const { headers, plans, m0 } = await seedCatalogue(first);
    const change = json(
      await bulkAssign(first, headers, {
        merchant_ids: [m0],
        payment_plan_ids: [plans.visa6.id],
        effective_at: inSeconds(3600),
      }),
    ).scheduled_change;
    await first.close();
    await makeDue(change.id, 30_000);
    const effectiveAt = (await statusOf(change.id)).effectiveAt;
    const restarted = await secondInstance(h, FAST);
    try {
      await waitFor(async () => (await statusOf(change.id)).status === 'APPLIED', 'applied after the restart', {
        timeoutMs: 5000,
      });
      const [row] = await db()
        .select()
        .from(merchantPaymentPlans)
        .where(eq(merchantPaymentPlans.paymentPlanId, plans.visa6.id));
      assert.equal(row!.assignedAt.toISOString(), effectiveAt.toISOString());
    } finally {
      await restarted.close();
    }
  });
});

describe('fee-rules?at= from memory', () => {
  it('sees at once a change made by another instance or by hand, and never serves another customer', async () => {
    const { app, headers, plans, m0, o0 } = await setup();
    const other = await secondInstance(h, FAST);
    try {
      const ids = async (instance: FastifyInstance) =>
        json(await feeRulesAt(instance, headers, m0)).data.map((p: { id: string }) => p.id);
      const before = await ids(other);
      assert.deepEqual(await ids(other), before, 'held, and answered the same');
      assert.equal(
        (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] })).statusCode,
        201,
      );
      await waitFor(async () => (await ids(other)).includes(plans.visa6.id), 'the other instance sees the change', {
        timeoutMs: 5000,
      });
      assert.ok((await ids(app)).includes(plans.visa6.id), 'the changing instance at once');
      await db().execute(sql`DELETE FROM merchant_payment_plans WHERE payment_plan_id = ${plans.visa6.id}`);
      await waitFor(async () => !(await ids(other)).includes(plans.visa6.id), 'a change by hand is seen', {
        timeoutMs: 5000,
      });
      // Another customer's merchant stays a 404, whatever is held.
      assert.equal((await feeRulesAt(other, headers, o0)).statusCode, 404);
    } finally {
      await other.close();
    }
  });
});
