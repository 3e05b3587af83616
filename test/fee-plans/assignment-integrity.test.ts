/** The database itself refuses assignments to missing parents, and deleting assigned parents. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, eq, sql } from 'drizzle-orm';
import { sqlState } from '../../src/db/database.js';
import { merchantPaymentPlans, merchants, paymentPlans } from '../../src/db/schema.js';
import { useTestApp } from '../helpers/app.js';
import { seedWorld, uuid } from '../helpers/fixtures.js';

const h = useTestApp();

const PLAN = {
  payment_method: 'CREDIT',
  card_brand: 'VISA',
  term: 1,
  commission: 2.5,
  has_installments: false,
  is_international: false,
};

async function setup() {
  const app = await h.app();
  const planId = uuid('e');
  const unusedPlanId = uuid('e');
  const world = await seedWorld(app, {
    payment_plans: [
      { id: planId, ...PLAN },
      { id: unusedPlanId, ...PLAN, term: 2, has_installments: true },
    ],
  });
  await app.services.importer.importDocument({
    assignments: [{ merchant_id: world.merchantIds[0]!, payment_plan_ids: [planId] }],
  });
  return { db: h.db.current.database.db, world, planId, unusedPlanId };
}

async function rejectsWith23503(work: Promise<unknown>) {
  await assert.rejects(work, (err: unknown) => sqlState(err) === '23503');
}

describe('assignment integrity in the database', () => {
  it('refuses assignments to a merchant or plan that does not exist', async () => {
    const { db, world, planId } = await setup();
    await rejectsWith23503(db.insert(merchantPaymentPlans).values({ merchantId: uuid('d'), paymentPlanId: planId }));
    await rejectsWith23503(
      db.insert(merchantPaymentPlans).values({ merchantId: world.merchantIds[1]!, paymentPlanId: uuid('e') }),
    );
    await rejectsWith23503(db.update(merchantPaymentPlans).set({ paymentPlanId: uuid('e') }));
    const [row] = await db.select({ n: count() }).from(merchantPaymentPlans);
    assert.equal(row!.n, 1);
  });

  it('refuses deleting or re-keying a merchant or plan that is assigned, and allows it otherwise', async () => {
    const { db, world, planId, unusedPlanId } = await setup();
    await rejectsWith23503(db.delete(merchants).where(eq(merchants.id, world.merchantIds[0]!)));
    await rejectsWith23503(db.delete(paymentPlans).where(eq(paymentPlans.id, planId)));
    await rejectsWith23503(
      db
        .update(paymentPlans)
        .set({ id: uuid('e') })
        .where(eq(paymentPlans.id, planId)),
    );
    await db.update(paymentPlans).set({ commission: '3' }).where(eq(paymentPlans.id, planId));
    await db.delete(paymentPlans).where(eq(paymentPlans.id, unusedPlanId));
    await db.delete(merchants).where(eq(merchants.id, world.merchantIds[1]!));
    const [left] = await db
      .select({ n: count() })
      .from(merchants)
      .where(sql`${merchants.id} = ${world.merchantIds[0]!}`);
    assert.equal(left!.n, 1);
  });
});
