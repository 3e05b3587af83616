/** Scheduled fee-rule changes made, listed and cancelled: `effective_at` on the assignment operations checked now (202 or a refusal). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import { apiKey, assignmentSnapshot, bulkAssign, bulkAssignAll } from '../helpers/plans.js';
import { cancel, inSeconds, listChanges, scheduledChangesOn, scheduleIn1h } from '../helpers/scheduled-changes.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const { rows, auditOf, makeDue, statusOf, setup } = scheduledChangesOn(h);

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
