/**
 * Scheduled fee-rule changes: `effective_at` on the assignment operations (202),
 * checked now, applied at the instant once by one instance in one transaction,
 * dated at the instant; listed, cancelled, projected by fee-rules?at=.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import {
  auditEvents,
  domainEvents,
  merchantPaymentPlanHistory,
  merchantPaymentPlans,
  scheduledFeeRuleChanges,
} from '../../src/db/schema.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  assignmentSnapshot,
  bulkAssign,
  bulkAssignAll,
  type Credentials,
  feeRulesAt,
  seedCatalogue,
} from '../helpers/plans.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const db = () => h.db.current.database.db;
/** Fast polling: a due change is found within a tenth of a second. */
const FAST = { scheduledChangesPollMs: 100 };

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const rows = () => db().select().from(scheduledFeeRuleChanges);
const auditOf = (action: string) => db().select().from(auditEvents).where(eq(auditEvents.action, action));
const eventsOf = (type: string) => db().select().from(domainEvents).where(eq(domainEvents.type, type));
/** Makes change `id` due now, as if its instant had come (the worker only reads the clock). */
const makeDue = (id: string, msAgo = 10) =>
  db()
    .update(scheduledFeeRuleChanges)
    .set({ effectiveAt: new Date(Date.now() - msAgo) })
    .where(eq(scheduledFeeRuleChanges.id, id));
const statusOf = async (id: string) =>
  (await db().select().from(scheduledFeeRuleChanges).where(eq(scheduledFeeRuleChanges.id, id)))[0]!;

const listChanges = (app: FastifyInstance, headers: Credentials, query = '') =>
  app.inject({ method: 'GET', url: `/v1/fee-rules/scheduled-changes${query}`, headers });
const cancel = (app: FastifyInstance, headers: Credentials, id: string) =>
  app.inject({ method: 'DELETE', url: `/v1/fee-rules/scheduled-changes/${id}`, headers });

/** Schedules `planId` for `merchantId` an hour ahead; answers the scheduled change. */
async function scheduleIn1h(app: FastifyInstance, headers: Credentials, merchantId: string, planId: string) {
  const res = await bulkAssign(app, headers, {
    merchant_ids: [merchantId],
    payment_plan_ids: [planId],
    effective_at: inSeconds(3600),
  });
  assert.equal(res.statusCode, 202, res.body);
  return json(res).scheduled_change;
}

async function setup(overrides = FAST) {
  const app = await h.app(overrides);
  return { app, ...(await seedCatalogue(app)) };
}

describe('scheduling: effective_at is checked now', () => {
  for (const [name, at] of [
    ['in the past', () => inSeconds(-60)],
    ['4 s ahead', () => inSeconds(4)],
    ['401 days ahead', () => inSeconds(401 * 86_400)],
    ['without an offset', () => inSeconds(3600).replace('Z', '')],
    ['a leap second', () => '2026-12-31T23:59:60Z'],
    ['not an instant', () => 'tomorrow'],
  ] as const) {
    it(`answers 400 for effective_at ${name}, on every assignment operation, scheduling and changing nothing`, async () => {
      const { app, headers, plans, m0 } = await setup();
      const before = await assignmentSnapshot(h.db.current.database);
      const effective_at = at();
      for (const res of [
        await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id], effective_at }),
        await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id], effective_at }),
        await app.inject({
          method: 'POST',
          url: `/v1/merchants/${m0}/fee-rules`,
          headers,
          payload: { payment_plan_ids: [plans.visa6.id], effective_at },
        }),
      ]) {
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res).code, 'validation_failed');
        assert.equal(json(res).errors[0].field, 'effective_at');
      }
      assert.deepEqual(await rows(), []);
      assert.deepEqual(await assignmentSnapshot(h.db.current.database), before);
    });
  }

  it('accepts the bounds: 6 s and 399 days ahead, with any offset', async () => {
    const { app, headers, plans, m0 } = await setup();
    for (const effective_at of [inSeconds(6), inSeconds(399 * 86_400).replace('Z', '+00:00')]) {
      const res = await bulkAssign(app, headers, {
        merchant_ids: [m0],
        payment_plan_ids: [plans.visa6.id],
        effective_at,
      });
      assert.equal(res.statusCode, 202, res.body);
    }
  });

  it('refuses what the immediate call refuses (422), scheduling nothing', async () => {
    const { app, headers, plans, m0, o0 } = await setup();
    const effective_at = inSeconds(3600);
    const retired = json(
      await app.inject({
        method: 'POST',
        url: '/v1/fee-rules',
        headers,
        payload: {
          payment_method: 'QR',
          card_brand: 'VISA',
          term: 0,
          commission: 1,
          has_installments: false,
          is_international: false,
        },
      }),
    );
    await app.inject({ method: 'DELETE', url: `/v1/fee-rules/${retired.id}`, headers });
    for (const [body, code] of [
      [{ merchant_ids: [m0], payment_plan_ids: [plans.foreign.id] }, 'unknown_payment_plans'],
      [{ merchant_ids: [o0], payment_plan_ids: [plans.visa6.id] }, 'unknown_merchants'],
      [{ merchant_ids: [m0], payment_plan_ids: [retired.id] }, 'retired_payment_plans'],
      [{ merchant_ids: [m0], payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] }, 'conflicting_payment_plans'],
    ] as const) {
      const res = await bulkAssign(app, headers, { ...body, effective_at });
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(json(res).code, code);
    }
    assert.deepEqual(await rows(), []);
  });

  it('with dry_run=true previews the present state and schedules nothing', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await bulkAssign(
      app,
      headers,
      { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id], effective_at: inSeconds(3600) },
      '?dry_run=true',
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).assignments_removed, 1);
    assert.deepEqual(await rows(), []);
    const late = await bulkAssign(
      app,
      headers,
      { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id], effective_at: inSeconds(-1) },
      '?dry_run=true',
    );
    assert.equal(late.statusCode, 400, 'the instant is checked in a dry run too');
  });

  it('is refused to merchant callers (403)', async () => {
    const { app, world, plans, m0 } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const res = await bulkAssign(app, apiKey(key.api_key), {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visa6.id],
      effective_at: inSeconds(3600),
    });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(await rows(), []);
  });
});

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

describe('listing and cancelling', () => {
  it('lists the customer’s changes newest first, by status; never another customer’s', async () => {
    const { app, headers, plans, m0, world } = await setup();
    const a = await scheduleIn1h(app, headers, m0, plans.visa6.id);
    const b = json(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id], effective_at: inSeconds(7200) }),
    ).scheduled_change;
    const listed = json(await listChanges(app, headers));
    assert.deepEqual(
      listed.data.map((c: { id: string }) => c.id),
      [b.id, a.id],
    );
    assert.equal(listed.page.total_elements, 2);
    assert.equal(json(await listChanges(app, headers, '?status=CANCELLED')).page.total_elements, 0);
    assert.equal((await listChanges(app, headers, '?status=DONE')).statusCode, 400);
    const other = await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: 'owner@beta.test', password: 'beta-password-1' },
    });
    const otherHeaders = { authorization: `Bearer ${json(other).token.access_token}` };
    assert.equal(json(await listChanges(app, otherHeaders)).page.total_elements, 0);
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    assert.equal((await listChanges(app, apiKey(key.api_key))).statusCode, 403);
  });

  it('cancels a PENDING change (204, never applied, audited); again 204; an applied one 409; another customer’s 404', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(h.db.current.database);
    const change = await scheduleIn1h(app, headers, m0, plans.visa6.id);
    const res = await cancel(app, headers, change.id);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal((await cancel(app, headers, change.id)).statusCode, 204);
    assert.equal((await auditOf('fee_rules.schedule_cancelled')).length, 1);
    await makeDue(change.id);
    assert.equal(await app.services.scheduledChanges.applyDue(), false);
    assert.equal((await statusOf(change.id)).status, 'CANCELLED');
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), before, 'a cancelled change never applies');

    const applied = await scheduleIn1h(app, headers, m0, plans.visa6.id);
    await makeDue(applied.id);
    await waitFor(async () => (await statusOf(applied.id)).status === 'APPLIED', 'applied', { timeoutMs: 5000 });
    const refused = await cancel(app, headers, applied.id);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(json(refused).code, 'scheduled_change_not_pending');
    assert.equal((await statusOf(applied.id)).status, 'APPLIED');

    const other = await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: 'owner@beta.test', password: 'beta-password-1' },
    });
    const otherHeaders = { authorization: `Bearer ${json(other).token.access_token}` };
    const pending = await scheduleIn1h(app, headers, m0, plans.visa3.id);
    for (const id of [pending.id, applied.id, uuid('f')]) {
      const foreign = await cancel(app, otherHeaders, id);
      assert.equal(foreign.statusCode, 404);
      assert.equal(json(foreign).code, 'scheduled_change_not_found');
    }
    assert.equal((await statusOf(pending.id)).status, 'PENDING');
  });
});

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
