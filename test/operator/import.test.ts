import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { customers, merchantPaymentPlans, merchants, paymentPlans, users } from '../../src/db/schema.js';
import { demoDocument, DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import { ImportError } from '../../src/errors.js';
import { useTestApp } from '../helpers/app.js';
import { loginAs, uuid } from '../helpers/fixtures.js';

const h = useTestApp();

async function counts() {
  const db = h.db.current.database.db;
  const n = async (table: typeof customers | typeof merchants | typeof users | typeof paymentPlans | typeof merchantPaymentPlans) =>
    (await db.select({ n: count() }).from(table))[0]!.n;
  return {
    customers: await n(customers),
    merchants: await n(merchants),
    users: await n(users),
    plans: await n(paymentPlans),
    assignments: await n(merchantPaymentPlans),
  };
}

function validDocument() {
  const customer = uuid('c');
  const merchant = uuid('d');
  const plan = uuid('e');
  return {
    customers: [{ id: customer, name: 'Acme' }],
    merchants: [{ id: merchant, customer_id: customer, name: 'Acme Store' }],
    users: [
      { email: 'ops@acme.test', type: 'CUSTOMER', customer_id: customer, password: 'a-long-password' },
      { email: 'pos@acme.test', type: 'MERCHANT', customer_id: customer, merchant_id: merchant },
    ],
    payment_plans: [{ id: plan, payment_method: 'CREDIT', card_brand: 'VISA', term: 1, commission: 2.99, has_installments: false, is_international: false }],
    assignments: [{ merchant_id: merchant, payment_plan_ids: [plan] }],
  };
}

describe('import', () => {
  it('imports every kind of record in one go, and is idempotent', async () => {
    const app = await h.app();
    const doc = validDocument();
    await app.services.importer.importDocument(doc);
    const first = await counts();
    assert.deepEqual(first, { customers: 1, merchants: 1, users: 2, plans: 1, assignments: 1 });
    await app.services.importer.importDocument(doc);
    assert.deepEqual(await counts(), first);
    await loginAs(app, { user: 'ops@acme.test', password: 'a-long-password' });
  });

  it('stores commission exactly', async () => {
    const app = await h.app();
    const doc = validDocument();
    doc.payment_plans[0]!.commission = 1.2345;
    await app.services.importer.importDocument(doc);
    const [plan] = await h.db.current.database.db.select().from(paymentPlans);
    assert.equal(plan!.commission, '1.2345');
  });

  const broken: Array<[string, (d: ReturnType<typeof validDocument>) => unknown, string]> = [
    ['a bad UUID', (d) => ((d.merchants[0]!.customer_id = 'nope'), d), '$.merchants[0].customer_id'],
    ['an unknown customer', (d) => ((d.merchants[0]!.customer_id = uuid('c')), d), '$.merchants[0].customer_id'],
    ['a lower-case brand', (d) => ((d.payment_plans[0]!.card_brand = 'visa'), d), '$.payment_plans[0].card_brand'],
    ['a negative commission', (d) => ((d.payment_plans[0]!.commission = -1), d), '$.payment_plans[0].commission'],
    ['a merchant user without merchant', (d) => (delete (d.users[1] as { merchant_id?: string }).merchant_id, d), '$.users[1].merchant_id'],
    ['an unknown plan in an assignment', (d) => ((d.assignments[0]!.payment_plan_ids = [uuid('e')]), d), '$.assignments[0].payment_plan_ids[0]'],
    ['an unknown field', (d) => ({ ...d, extra: true }), '$.extra'],
    ['not an object', () => [1, 2], '$'],
  ];
  for (const [name, breakIt, path] of broken) {
    it(`refuses ${name}, naming ${path}, and writes nothing`, async () => {
      const app = await h.app();
      const before = await counts();
      await assert.rejects(app.services.importer.importDocument(breakIt(validDocument())), (err: unknown) => {
        assert.ok(err instanceof ImportError, String(err));
        assert.equal(err.path, path);
        return true;
      });
      assert.deepEqual(await counts(), before);
    });
  }

  it('loads the demo data set, whose logins work', async () => {
    const app = await h.app();
    await app.services.importer.importDocument(demoDocument());
    const c = await counts();
    assert.equal(c.customers, 2);
    assert.ok(c.merchants >= 6);
    assert.ok(c.plans >= 40);
    for (const login of DEMO_LOGINS) await loginAs(app, login);
  });
});
