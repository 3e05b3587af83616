/**
 * Four-eyes approval of fee changes (contract section 23), what becomes of a held
 * change: applied only while its preview holds, FAILED when it can no longer apply,
 * EXPIRED when nobody decided in time, and the other fee changes held the same way.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { changeRequests } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { approve, getRequest, heldRequest, setPolicy, underApproval } from '../helpers/change-requests.js';
import { assignmentSnapshot, bulkAssign } from '../helpers/plans.js';

const h = useTestApp();
const db = () => h.db.current.database.db;
const snapshot = () => assignmentSnapshot(h.db.current.database);
const storedRequests = () => db().select().from(changeRequests);

describe('the preview hash', () => {
  it('a world that moved answers 409 preview_changed with the current preview, and nothing changes; the current hash applies', async () => {
    const app = await h.app();
    const { maker, checker, plans, m0, m1 } = await underApproval(app);
    const held = heldRequest(
      await bulkAssign(app, maker, { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa6.id] }),
    );
    const seen = json(await getRequest(app, checker, held.id));
    assert.deepEqual(seen.current_preview, held.preview);
    assert.match(seen.preview_hash, /^[0-9a-f]{64}$/);
    // Meanwhile m1 gets visa6 (the policy lifted for a moment): the request would now change less.
    await setPolicy(app, checker, 'NONE');
    assert.equal(
      (await bulkAssign(app, checker, { merchant_ids: [m1], payment_plan_ids: [plans.visa6.id] })).statusCode,
      201,
    );
    await setPolicy(app, checker, 'REQUIRED');
    const before = await snapshot();
    const stale = await approve(app, checker, held.id, { preview_hash: seen.preview_hash });
    assert.equal(stale.statusCode, 409, stale.body);
    assert.equal(json(stale).code, 'preview_changed');
    assert.equal(json(stale).current_preview.merchants_changed, 1);
    assert.notEqual(json(stale).preview_hash, seen.preview_hash);
    assert.deepEqual(await snapshot(), before);
    const now = json(await getRequest(app, checker, held.id));
    assert.equal(now.status, 'PENDING');
    // The 409 names (from the change it rolled back) the hash the record's dry run names now.
    assert.equal(now.preview_hash, json(stale).preview_hash);
    const fresh = await approve(app, checker, held.id, { preview_hash: json(stale).preview_hash });
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.equal(json(fresh).status, 'APPLIED');
  });
});

describe('a change that can no longer apply', () => {
  it('is FAILED with the reason when its plan was retired meanwhile', async () => {
    const app = await h.app();
    const { maker, checker, plans, m0 } = await underApproval(app);
    const held = heldRequest(
      await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa1Own.id] }),
    );
    await db().execute(
      (await import('drizzle-orm')).sql`UPDATE payment_plans SET status = 'RETIRED' WHERE id = ${plans.visa1Own.id}`,
    );
    const before = await snapshot();
    const current = json(await getRequest(app, checker, held.id));
    assert.equal(current.current_preview.problem.code, 'retired_payment_plans');
    const res = await approve(app, checker, held.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).status, 'FAILED');
    assert.match(json(res).reason, /retired/i);
    assert.deepEqual(await snapshot(), before);
    assert.equal((await approve(app, checker, held.id)).statusCode, 409);
  });
});

describe('expiry', () => {
  it('a request past its instant is EXPIRED by the sweep, a bounded batch at a time', async () => {
    const app = await h.app();
    const { maker, checker, plans, m0 } = await underApproval(app);
    const held = heldRequest(await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }));
    const kept = heldRequest(await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa3.id] }));
    await db()
      .update(changeRequests)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(changeRequests.id, held.id));
    assert.equal(await app.services.changeRequests.expireDue(), false, 'not a full batch');
    assert.equal(json(await getRequest(app, maker, held.id)).status, 'EXPIRED');
    assert.equal(json(await getRequest(app, maker, kept.id)).status, 'PENDING');
    const res = await approve(app, checker, held.id);
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).code, 'change_request_closed');
  });
});

describe('the other fee changes under REQUIRED', () => {
  const newPlan = {
    payment_method: 'CREDIT',
    card_brand: 'AMEX',
    term: 1,
    commission: 3.5,
    has_installments: false,
    is_international: false,
  };

  it('creating and retiring a plan and cancelling a scheduled change are held, then applied by their approval', async () => {
    const app = await h.app();
    const { maker, checker, plans, m0 } = await underApproval(app);
    // A scheduled change to cancel, made while the policy is lifted.
    await setPolicy(app, checker, 'NONE');
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = json(
      await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id], effective_at: at }),
    ).scheduled_change;
    await setPolicy(app, checker, 'REQUIRED');
    const created = heldRequest(
      await app.inject({ method: 'POST', url: '/v1/fee-rules', headers: maker, payload: newPlan }),
    );
    assert.equal(created.operation, 'payment_plan.create');
    const retired = heldRequest(
      await app.inject({ method: 'DELETE', url: `/v1/fee-rules/${plans.visa1Own.id}`, headers: maker }),
    );
    assert.equal(retired.operation, 'payment_plan.retire');
    const cancelled = heldRequest(
      await app.inject({ method: 'DELETE', url: `/v1/fee-rules/scheduled-changes/${scheduled.id}`, headers: maker }),
    );
    assert.equal(cancelled.expires_at, new Date(at).toISOString());
    const catalogue = async () =>
      json(await app.inject({ method: 'GET', url: '/v1/fee-rules?owner=CUSTOMER&status=ACTIVE', headers: maker })).data;
    assert.equal((await catalogue()).length, 1, 'nothing created or retired yet');
    for (const held of [created, retired, cancelled]) {
      const seen = json(await getRequest(app, checker, held.id));
      const res = await approve(app, checker, held.id, { preview_hash: seen.preview_hash });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).status, 'APPLIED', `${held.operation}: ${res.body}`);
    }
    const active = await catalogue();
    assert.deepEqual(
      active.map((p: { card_brand: string }) => p.card_brand),
      ['AMEX'],
      'AMEX created, the own VISA retired',
    );
    const changes = json(await app.inject({ method: 'GET', url: '/v1/fee-rules/scheduled-changes', headers: maker }));
    assert.equal(changes.data[0].status, 'CANCELLED');
  });

  it('a plan that would be a 409 or a 404 still is, and nothing is held', async () => {
    const app = await h.app();
    const { maker } = await underApproval(app);
    const unknown = await app.inject({
      method: 'DELETE',
      url: '/v1/fee-rules/00000000-0000-4000-8000-000000000000',
      headers: maker,
    });
    assert.equal(unknown.statusCode, 404);
    const bad = await app.inject({ method: 'POST', url: '/v1/fee-rules', headers: maker, payload: { term: 1 } });
    assert.equal(bad.statusCode, 400);
    assert.equal((await storedRequests()).length, 0);
  });
});
