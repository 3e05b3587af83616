/**
 * Property: whatever the catalogue, the current assignments and a sequence of
 * requests, each merchant ends with what the reference model of the replacement
 * rule says, and a conflicting request changes nothing. Each request's dry run
 * first announces exactly the model's change. And history: after the whole
 * sequence, the plans each merchant held at every instant recorded (between the
 * requests, and every assigned_at and removed_at the database wrote) are the
 * model's state at that point.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/database.js';
import { merchantPaymentPlanHistory, merchantPaymentPlans, paymentPlans } from '../../src/db/schema.js';
import { bearer, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld, uuid } from '../helpers/fixtures.js';
import { type Credentials, assignmentSnapshot, bulkAssign, bulkAssignAll, feeRulesAt } from '../helpers/plans.js';
import {
  type Assignments,
  applyReplacement,
  changesOf,
  hasConflict,
  linesOf,
  type ModelPlan,
} from './replacement-model.js';

const h = useTestApp();

const planSpec = fc.record({
  card_brand: fc.constantFrom('VISA', 'MASTERCARD'),
  payment_method: fc.constantFrom('CREDIT', 'DEBIT'),
  is_international: fc.boolean(),
  has_installments: fc.boolean(),
  term: fc.integer({ min: 0, max: 2 }),
  owned: fc.boolean(),
});

const MERCHANTS = 4;
const scenario = fc.integer({ min: 1, max: 8 }).chain((planCount) =>
  fc.record({
    plans: fc.array(planSpec, { minLength: planCount, maxLength: planCount }),
    current: fc.array(fc.uniqueArray(fc.nat(planCount - 1), { maxLength: planCount }), {
      minLength: MERCHANTS,
      maxLength: MERCHANTS,
    }),
    requests: fc.array(
      fc.record({
        plans: fc.array(fc.nat(planCount - 1), { minLength: 1, maxLength: 5 }),
        targets: fc.oneof(fc.constant('all' as const), fc.array(fc.nat(MERCHANTS - 1), { minLength: 1, maxLength: 5 })),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

/**
 * Lets the clock pass a whole millisecond: times are kept to the millisecond, so
 * an instant taken between two ticks falls strictly between the changes before
 * and after it.
 */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

/** What GET /v1/merchants/{id}/fee-rules?at= answers, as a model state. */
async function stateAt(app: FastifyInstance, headers: Credentials, merchantIds: string[], at: Date): Promise<string[]> {
  const state: Assignments = new Map();
  for (const merchantId of merchantIds) {
    const res = await feeRulesAt(app, headers, merchantId, at);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.at, at.toISOString());
    for (const plan of body.data)
      assert.ok(Date.parse(plan.assigned_at) <= at.getTime(), 'held since before the instant');
    state.set(merchantId, new Set(body.data.map((p: { id: string }) => p.id)));
  }
  return linesOf(state);
}

describe('bulk assignment: property', () => {
  it('agrees with the reference model of the replacement rule, in its dry run and in its history', async () => {
    // Hundreds of assignments of one customer: its per-minute limit is tested in assignment-limits.test.ts.
    const app = await h.app({ assignmentsPerCustomerPerMinute: 0 });
    const world = await seedWorld(app);
    const extra = [uuid('d'), uuid('d')];
    await app.services.importer.importDocument({
      merchants: extra.map((id, i) => ({ id, customer_id: world.customerId, name: `Extra ${i}` })),
    });
    const merchantIds = [...world.merchantIds, ...extra];
    const headers = bearer((await loginAs(app, world.login)).access_token);
    const { database } = h.db.current;
    const { db } = database;

    await fc.assert(
      fc.asyncProperty(scenario, async ({ plans, current, requests }) => {
        // History names plans, so plans go last (the database refuses the reverse).
        await db.delete(merchantPaymentPlans);
        await db.delete(merchantPaymentPlanHistory);
        await db.delete(paymentPlans);
        const catalogue: ModelPlan[] = plans.map(({ owned: _owned, ...spec }) => ({ id: uuid('e'), ...spec }));
        await db.insert(paymentPlans).values(
          catalogue.map((p, i) => ({
            id: p.id,
            customerId: plans[i]!.owned ? world.customerId : null,
            cardBrand: p.card_brand,
            paymentMethod: p.payment_method,
            isInternational: p.is_international,
            hasInstallments: p.has_installments,
            term: p.term,
            commission: '1.5',
          })),
        );
        let state: Assignments = new Map(
          merchantIds.map((m, i) => [m, new Set(current[i]!.map((n) => catalogue[n]!.id))]),
        );
        const rows = linesOf(state).map((line) => line.split(' ') as [string, string]);
        if (rows.length)
          await db
            .insert(merchantPaymentPlans)
            .values(rows.map(([merchantId, paymentPlanId]) => ({ merchantId, paymentPlanId })));
        const byId = new Map(catalogue.map((p) => [p.id, p]));
        // The instant after each request (and before the first), with the model's state then.
        await tick();
        const instants: Array<{ at: Date; state: Assignments }> = [{ at: new Date(), state }];
        await tick();

        for (const request of requests) {
          const sent = request.plans.map((n) => catalogue[n]!);
          const payment_plan_ids = sent.map((p) => p.id);
          const targets = request.targets === 'all' ? merchantIds : request.targets.map((n) => merchantIds[n]!);
          const send = (query = '') =>
            request.targets === 'all'
              ? bulkAssignAll(app, headers, { payment_plan_ids }, query)
              : bulkAssign(app, headers, { merchant_ids: targets, payment_plan_ids }, query);
          const dryRun = await send('?dry_run=true');
          const res = await send();
          if (hasConflict(sent)) {
            for (const refused of [dryRun, res]) {
              assert.equal(refused.statusCode, 422, refused.body);
              assert.equal(refused.json().code, 'conflicting_payment_plans');
            }
          } else {
            const next = applyReplacement(state, byId, targets, sent);
            const changes = changesOf(state, next);
            assert.equal(dryRun.statusCode, 200, dryRun.body);
            assert.deepEqual(dryRun.json(), {
              dry_run: true,
              merchants: new Set(targets).size,
              merchants_changed: changes.length,
              assignments_added: changes.reduce((n, c) => n + c.added.length, 0),
              assignments_removed: changes.reduce((n, c) => n + c.removed.length, 0),
              changes,
            });
            assert.equal(res.statusCode, 201, res.body);
            state = next;
          }
          assert.deepEqual(await assignmentSnapshot(database), linesOf(state));
          await tick();
          instants.push({ at: new Date(), state });
          await tick();
        }

        // Every instant the history recorded belongs to the request that wrote it:
        // the one whose window (previous instant, its instant] contains it.
        const recorded = await queryRows<{ at: string }>(
          db,
          sql`
          SELECT DISTINCT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM (
            SELECT assigned_at AS t FROM merchant_payment_plans
            UNION ALL SELECT assigned_at FROM merchant_payment_plan_history
            UNION ALL SELECT removed_at FROM merchant_payment_plan_history) times
          WHERE t > ${instants[0]!.at.toISOString()}::timestamptz`,
        );
        const checks = [...instants];
        for (const { at } of recorded) {
          const instant = new Date(at);
          const writer = instants.findIndex((i) => i.at.getTime() >= instant.getTime());
          assert.ok(writer > 0, `${at} was recorded during a request`);
          checks.push({ at: instant, state: instants[writer]!.state });
        }
        for (const check of checks) {
          assert.deepEqual(
            await stateAt(app, headers, merchantIds, check.at),
            linesOf(check.state),
            `the plans held at ${check.at.toISOString()}`,
          );
        }
      }),
      { numRuns: 25 },
    );
  });
});
