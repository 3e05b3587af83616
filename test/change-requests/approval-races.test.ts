/**
 * Approvals against time and each other (contract section 23): two ADMINs
 * approving at once on two instances, and held schedulings: approved before
 * their instant they apply at it, across a restart; pending at it, they expire.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { domainEvents, scheduledFeeRuleChanges } from '../../src/db/schema.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { approve, getRequest, heldRequest, underApproval } from '../helpers/change-requests.js';
import { bulkAssign, bulkAssignAll, plansByMerchant } from '../helpers/plans.js';
import { waitFor } from '../helpers/wait.js';
import { FAST, inSeconds } from '../helpers/scheduled-changes.js';

const h = useTestApp();
const db = () => h.db.current.database.db;

describe('two approvals at once', () => {
  it('on two instances of one database: one applies, the other answers 409 change_request_closed', async () => {
    const app = await h.app();
    const { maker, checker, plans } = await underApproval(app);
    const held = heldRequest(await bulkAssignAll(app, maker, { payment_plan_ids: [plans.visa6.id] }));
    const other = await secondInstance(h);
    try {
      const answers = await Promise.all([approve(app, checker, held.id), approve(other, checker, held.id)]);
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [200, 409], answers.map((r) => r.body).join('\n'));
      const closed = answers.find((r) => r.statusCode === 409)!;
      assert.equal(json(closed).code, 'change_request_closed');
      const assigned = await db().select().from(domainEvents).where(eq(domainEvents.type, 'FEE_RULES_ASSIGNED'));
      assert.equal(assigned.length, 1, 'applied once');
      const approved = await db().select().from(domainEvents).where(eq(domainEvents.type, 'CHANGE_REQUEST_APPROVED'));
      assert.equal(approved.length, 1);
    } finally {
      await other.close();
    }
  });
});

describe('a held scheduling', () => {
  it('is held until its instant at the latest: then it expires', async () => {
    const app = await h.app();
    const { maker, plans, m0 } = await underApproval(app);
    const effectiveAt = inSeconds(3600);
    const held = heldRequest(
      await bulkAssign(app, maker, {
        merchant_ids: [m0],
        payment_plan_ids: [plans.visa6.id],
        effective_at: effectiveAt,
      }),
    );
    assert.equal(held.expires_at, new Date(effectiveAt).toISOString(), 'its instant, sooner than 7 days');
  });

  it('approved before its instant, is scheduled, and applies at it after a restart', async () => {
    let app = await h.app(FAST);
    const { maker, checker, plans, m0 } = await underApproval(app);
    const held = heldRequest(
      await bulkAssign(app, maker, {
        merchant_ids: [m0],
        payment_plan_ids: [plans.visa6.id],
        effective_at: inSeconds(3600),
      }),
    );
    const res = await approve(app, checker, held.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).status, 'APPLIED');
    const scheduledId = json(res).result.scheduled_change.id as string;
    assert.ok(
      !(await plansByMerchant(h.db.current.database)).get(m0)!.includes(plans.visa6.id),
      'not before its instant',
    );
    // A restart: the first app closes, its instant comes, a new app on the same database applies it.
    await app.close();
    await db()
      .update(scheduledFeeRuleChanges)
      .set({ effectiveAt: new Date(Date.now() - 10) })
      .where(eq(scheduledFeeRuleChanges.id, scheduledId));
    const restarted = await secondInstance(h, FAST);
    try {
      await waitFor(async () => {
        const [row] = await db()
          .select()
          .from(scheduledFeeRuleChanges)
          .where(eq(scheduledFeeRuleChanges.id, scheduledId));
        return row?.status === 'APPLIED';
      }, 'the approved scheduled change applies after the restart');
      assert.ok((await plansByMerchant(h.db.current.database)).get(m0)!.includes(plans.visa6.id));
      assert.equal(json(await getRequest(restarted, maker, held.id)).status, 'APPLIED');
    } finally {
      await restarted.close();
      app = undefined as never;
    }
  });
});
