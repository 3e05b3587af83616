/**
 * Concurrent assignments that touch the same merchants end as if they had run
 * one after another, and none of them fails (no deadlock reaches a caller).
 * Meaningful on PostgreSQL (TEST_DATABASE_URL); PGlite runs them one at a time anyway.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { merchantPaymentPlans } from '../../src/db/schema.js';
import { useTestApp } from '../helpers/app.js';
import { uuid } from '../helpers/fixtures.js';
import { type PlanInput, assignmentSnapshot, bulkAssign, bulkAssignAll, seedCatalogue } from '../helpers/plans.js';
import { type Assignments, applyReplacement, linesOf } from './replacement-model.js';

const h = useTestApp();

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('bulk assignment: concurrency', () => {
  it('ends in the state of some serial order of overlapping assignments', async () => {
    const app = await h.app();
    const { world, plans, headers, m0, m1 } = await seedCatalogue(app);
    const m2 = uuid('d');
    await app.services.importer.importDocument({
      merchants: [{ id: m2, customer_id: world.customerId, name: 'Third' }],
    });
    const merchants = [m0, m1, m2];
    const catalogue = new Map<string, PlanInput>(Object.values(plans).map((p) => [p.id, p]));
    // Plans of the same kinds, so that the order of the requests decides the outcome.
    const requests: Array<{ targets: string[] | 'all'; plans: PlanInput[] }> = [
      { targets: [m0, m1], plans: [plans.visa1] },
      { targets: [m1, m2], plans: [plans.visa1Own, plans.visa3] },
      { targets: 'all', plans: [plans.visa6] },
      { targets: 'all', plans: [plans.visa1Own, plans.visa3, plans.visa6] },
      { targets: [m2, m0], plans: [plans.visa1, plans.visaDebit] },
    ];
    const serialOutcomes = (start: Assignments) =>
      new Set(
        permutations(requests).map((order) =>
          linesOf(
            order.reduce(
              (state, r) => applyReplacement(state, catalogue, r.targets === 'all' ? merchants : r.targets, r.plans),
              start,
            ),
          ).join('\n'),
        ),
      );

    for (let round = 0; round < 5; round++) {
      const start: Assignments = new Map();
      for (const line of await assignmentSnapshot(h.db.current.database)) {
        const [m, p] = line.split(' ') as [string, string];
        if (merchants.includes(m)) start.set(m, new Set([...(start.get(m) ?? []), p]));
      }
      const responses = await Promise.all(
        requests.map((r) => {
          const payment_plan_ids = r.plans.map((p) => p.id);
          return r.targets === 'all'
            ? bulkAssignAll(app, headers, { payment_plan_ids })
            : bulkAssign(app, headers, { merchant_ids: r.targets, payment_plan_ids });
        }),
      );
      for (const res of responses) assert.equal(res.statusCode, 201, res.body);
      const finalLines = (await assignmentSnapshot(h.db.current.database)).filter((line) =>
        merchants.includes(line.split(' ')[0]!),
      );
      assert.ok(
        serialOutcomes(start).has(finalLines.join('\n')),
        `round ${round}: the final state is not the outcome of any serial order`,
      );
      // Next round starts from a different state.
      await h.db.current.database.db.delete(merchantPaymentPlans);
      await h.db.current.database.db
        .insert(merchantPaymentPlans)
        .values({ merchantId: merchants[round % 3]!, paymentPlanId: plans.visa1.id });
    }
  });
});
