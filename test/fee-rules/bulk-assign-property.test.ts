/**
 * Property: whatever the catalogue, the current assignments and a sequence of
 * requests, each merchant ends with what the reference model of the replacement
 * rule says, and a conflicting request changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { merchantPaymentPlans, paymentPlans } from '../../src/db/schema.js';
import { bearer, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld, uuid } from '../helpers/fixtures.js';
import { assignmentSnapshot, bulkAssign, bulkAssignAll } from '../helpers/plans.js';
import { type Assignments, applyReplacement, hasConflict, linesOf, type ModelPlan } from './replacement-model.js';

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
    current: fc.array(fc.uniqueArray(fc.nat(planCount - 1), { maxLength: planCount }), { minLength: MERCHANTS, maxLength: MERCHANTS }),
    requests: fc.array(
      fc.record({
        plans: fc.array(fc.nat(planCount - 1), { minLength: 1, maxLength: 5 }),
        targets: fc.oneof(fc.constant('all' as const), fc.array(fc.nat(MERCHANTS - 1), { minLength: 1, maxLength: 5 })),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

describe('bulk assignment: property', () => {
  it('agrees with the reference model of the replacement rule', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const extra = [uuid('d'), uuid('d')];
    await app.services.importer.importDocument({ merchants: extra.map((id, i) => ({ id, customer_id: world.customerId, name: `Extra ${i}` })) });
    const merchantIds = [...world.merchantIds, ...extra];
    const headers = bearer((await loginAs(app, world.login)).access_token);
    const { db } = h.db.current.database;

    await fc.assert(
      fc.asyncProperty(scenario, async ({ plans, current, requests }) => {
        await db.delete(merchantPaymentPlans);
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
        let state: Assignments = new Map(merchantIds.map((m, i) => [m, new Set(current[i]!.map((n) => catalogue[n]!.id))]));
        const rows = linesOf(state).map((line) => line.split(' ') as [string, string]);
        if (rows.length) await db.insert(merchantPaymentPlans).values(rows.map(([merchantId, paymentPlanId]) => ({ merchantId, paymentPlanId })));
        const byId = new Map(catalogue.map((p) => [p.id, p]));

        for (const request of requests) {
          const sent = request.plans.map((n) => catalogue[n]!);
          const payment_plan_ids = sent.map((p) => p.id);
          const res =
            request.targets === 'all'
              ? await bulkAssignAll(app, headers, { payment_plan_ids })
              : await bulkAssign(app, headers, { merchant_ids: request.targets.map((n) => merchantIds[n]!), payment_plan_ids });
          if (hasConflict(sent)) {
            assert.equal(res.statusCode, 422, res.body);
            assert.equal(res.json().code, 'conflicting_payment_plans');
          } else {
            assert.equal(res.statusCode, 201, res.body);
            const targets = request.targets === 'all' ? merchantIds : request.targets.map((n) => merchantIds[n]!);
            state = applyReplacement(state, byId, targets, sent);
          }
          assert.deepEqual(await assignmentSnapshot(h.db.current.database), linesOf(state));
        }
      }),
      { numRuns: 25 },
    );
  });
});
