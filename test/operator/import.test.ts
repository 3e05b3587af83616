import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { customers, merchants, paymentPlans, users } from '../../src/db/schema.js';
import { demoDocument, DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import { ImportError } from '../../src/errors.js';
import { useTestApp } from '../helpers/app.js';
import { loginAs, uuid } from '../helpers/fixtures.js';
import { importCounts, validImportDocument } from '../helpers/import-documents.js';

const h = useTestApp();
const counts = () => importCounts(h.db.current.database);

describe('import', () => {
  it('imports every kind of record in one go, and is idempotent', async () => {
    const app = await h.app();
    const doc = validImportDocument();
    await app.services.importer.importDocument(doc);
    const first = await counts();
    assert.deepEqual(first, { customers: 1, merchants: 1, users: 2, plans: 1, assignments: 1 });
    await app.services.importer.importDocument(doc);
    assert.deepEqual(await counts(), first);
    await loginAs(app, { user: 'ops@acme.test', password: 'a-long-password' });
  });

  it('stores commission exactly', async () => {
    const app = await h.app();
    const doc = validImportDocument();
    doc.payment_plans[0]!.commission = 1.2345;
    await app.services.importer.importDocument(doc);
    const [plan] = await h.db.current.database.db.select().from(paymentPlans);
    assert.equal(plan!.commission, '1.2345');
  });

  /** Each breaks the document in place, or answers a replacement for it. */
  const broken: Array<[string, (d: ReturnType<typeof validImportDocument>) => unknown, string]> = [
    [
      'a bad UUID',
      (d) => {
        d.merchants[0]!.customer_id = 'nope';
      },
      '$.merchants[0].customer_id',
    ],
    [
      'an unknown customer',
      (d) => {
        d.merchants[0]!.customer_id = uuid('c');
      },
      '$.merchants[0].customer_id',
    ],
    [
      'a lower-case brand',
      (d) => {
        d.payment_plans[0]!.card_brand = 'visa';
      },
      '$.payment_plans[0].card_brand',
    ],
    [
      'a negative commission',
      (d) => {
        d.payment_plans[0]!.commission = -1;
      },
      '$.payment_plans[0].commission',
    ],
    [
      'a commission with a fifth decimal, which the API refuses',
      (d) => {
        d.payment_plans[0]!.commission = 2.12345;
      },
      '$.payment_plans[0].commission',
    ],
    [
      "a commission a hair past 4 decimals, within the schema check's tolerance",
      (d) => {
        d.payment_plans[0]!.commission = 2.12340001;
      },
      '$.payment_plans[0].commission',
    ],
    [
      'a weak password, which the API refuses',
      (d) => {
        d.users[0]!.password = 'password';
      },
      '$.users[0].password',
    ],
    [
      'a merchant user without merchant',
      (d) => {
        delete (d.users[1] as { merchant_id?: string }).merchant_id;
      },
      '$.users[1].merchant_id',
    ],
    [
      'an unknown plan in an assignment',
      (d) => {
        d.assignments[0]!.payment_plan_ids = [uuid('e')];
      },
      '$.assignments[0].payment_plan_ids[0]',
    ],
    ['an unknown field', (d) => ({ ...d, extra: true }), '$.extra'],
    ['not an object', () => [1, 2], '$'],
  ];
  for (const [name, breakIt, path] of broken) {
    it(`refuses ${name}, naming ${path}, and writes nothing`, async () => {
      const app = await h.app();
      const before = await counts();
      const doc = validImportDocument();
      const input = breakIt(doc) ?? doc;
      await assert.rejects(app.services.importer.importDocument(input), (err: unknown) => {
        assert.ok(err instanceof ImportError, String(err));
        assert.equal(err.path, path);
        return true;
      });
      assert.deepEqual(await counts(), before);
    });
  }

  it('imports 50,000 merchants in one go (batches under the bind-parameter limit), idempotently', async () => {
    const app = await h.app();
    const customer = uuid('c');
    const stores = Array.from({ length: 50_000 }, (_, i) => ({
      id: `d${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`,
      customer_id: customer,
      name: `Store ${i}`,
    }));
    const doc = { customers: [{ id: customer, name: 'Big' }], merchants: stores };
    const summary = await app.services.importer.importDocument(doc);
    assert.equal(summary.merchants, 50_000);
    assert.equal((await counts()).merchants, 50_000);
    stores[49_999]!.name = 'Renamed';
    await app.services.importer.importDocument(doc);
    assert.equal((await counts()).merchants, 50_000);
    const [last] = await h.db.current.database.db.select().from(merchants).where(eq(merchants.id, stores[49_999]!.id));
    assert.equal(last!.name, 'Renamed');
  });

  it('gives two customers that list one e-mail two integration users, and a login user its own row', async () => {
    const app = await h.app();
    const doc = validImportDocument();
    const other = uuid('c');
    doc.customers.push({ id: other, name: 'Other' });
    doc.users.push({ email: 'POS@acme.test', type: 'CUSTOMER', customer_id: other } as (typeof doc.users)[number]);
    doc.users.push({
      email: 'ops@acme.test',
      type: 'CUSTOMER',
      customer_id: doc.customers[0]!.id,
    } as (typeof doc.users)[number]);
    await app.services.importer.importDocument(doc);
    const rows = await h.db.current.database.db.select().from(users);
    assert.equal(rows.filter((u) => u.email === 'pos@acme.test').length, 2);
    assert.equal(rows.filter((u) => u.email === 'ops@acme.test').length, 2, 'the login user and an integration user');
    await loginAs(app, { user: 'ops@acme.test', password: 'a-long-password' });
  });

  const moves: Array<
    [string, (d: ReturnType<typeof validImportDocument>, other: string, otherMerchant: string) => void]
  > = [
    [
      'a login user under another customer',
      (d, other) => {
        d.users[0]!.customer_id = other;
      },
    ],
    [
      'a merchant user under another merchant',
      (d, _other, otherMerchant) => {
        (d.users[1] as { merchant_id?: string }).merchant_id = otherMerchant;
      },
    ],
    [
      'a merchant user as a CUSTOMER user',
      (d) => {
        d.users[1]!.type = 'CUSTOMER';
        delete (d.users[1] as { merchant_id?: string }).merchant_id;
      },
    ],
  ];
  for (const [name, change] of moves) {
    it(`never moves a user: refuses ${name}, naming the e-mail, and writes nothing`, async () => {
      const app = await h.app();
      const doc = validImportDocument();
      const other = uuid('c');
      const otherMerchant = uuid('d');
      doc.customers.push({ id: other, name: 'Other' });
      doc.merchants.push({ id: otherMerchant, customer_id: doc.customers[0]!.id, name: 'Second store' });
      await app.services.importer.importDocument(doc);
      const before = await counts();
      const usersBefore = await h.db.current.database.db.select().from(users).orderBy(users.email);
      const again = structuredClone(doc);
      again.customers[0]!.name = 'Renamed';
      change(again, other, otherMerchant);
      await assert.rejects(app.services.importer.importDocument(again), (err: unknown) => {
        assert.ok(err instanceof ImportError, String(err));
        assert.match(err.message, /^\$\.users\[[01]\]: user (ops|pos)@acme\.test /);
        assert.doesNotMatch(err.message, /insert|select|update/i);
        return true;
      });
      assert.deepEqual(await counts(), before);
      assert.deepEqual(await h.db.current.database.db.select().from(users).orderBy(users.email), usersBefore);
      const [customer] = await h.db.current.database.db
        .select()
        .from(customers)
        .where(eq(customers.id, doc.customers[0]!.id));
      assert.equal(customer!.name, 'Acme', 'nothing of the file was written');
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
