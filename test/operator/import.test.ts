import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FormatRegistry } from '@sinclair/typebox';
import { count, eq } from 'drizzle-orm';
import { customers, merchantPaymentPlans, merchants, paymentPlans, users } from '../../src/db/schema.js';
import { demoDocument, DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import type { InjectOptions } from 'fastify';
import { ImportError } from '../../src/errors.js';
import { bearer, useTestApp } from '../helpers/app.js';
import { customerSession, loginAs, uuid, type World } from '../helpers/fixtures.js';

const h = useTestApp();

async function counts() {
  const db = h.db.current.database.db;
  const n = async (
    table: typeof customers | typeof merchants | typeof users | typeof paymentPlans | typeof merchantPaymentPlans,
  ) => (await db.select({ n: count() }).from(table))[0]!.n;
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
    payment_plans: [
      {
        id: plan,
        payment_method: 'CREDIT',
        card_brand: 'VISA',
        term: 1,
        commission: 2.99,
        has_installments: false,
        is_international: false,
      },
    ],
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

  /** Each breaks the document in place, or answers a replacement for it. */
  const broken: Array<[string, (d: ReturnType<typeof validDocument>) => unknown, string]> = [
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
      const doc = validDocument();
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
    const doc = validDocument();
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

  const moves: Array<[string, (d: ReturnType<typeof validDocument>, other: string, otherMerchant: string) => void]> = [
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
      const doc = validDocument();
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

describe("import: the API's rules, in the API's words", () => {
  type Doc = ReturnType<typeof validDocument>;
  /** A field of the document, and a request that sends the same value to a field of the API with the same rule (names and login names are both text). */
  interface Door {
    path: string;
    set: (d: Doc, value: string) => void;
    api: (world: World, value: string) => InjectOptions;
    field: string;
  }
  const loginName = (_w: World, v: string): InjectOptions => ({
    method: 'POST',
    url: '/v1/login',
    payload: { user: v, password: 'a-long-password' },
  });
  const doors = {
    merchantName: {
      path: '$.merchants[0].name',
      set: (d, v) => (d.merchants[0]!.name = v),
      api: loginName,
      field: 'user',
    },
    customerName: {
      path: '$.customers[0].name',
      set: (d, v) => (d.customers[0]!.name = v),
      api: loginName,
      field: 'user',
    },
    password: {
      path: '$.users[0].password',
      set: (d, v) => (d.users[0]!.password = v),
      api: (w, v) => ({ method: 'POST', url: '/v1/login', payload: { user: w.login.user, password: v } }),
      field: 'password',
    },
    email: {
      path: '$.users[1].email',
      set: (d, v) => (d.users[1]!.email = v),
      api: (w, v) => ({ method: 'POST', url: '/v1/api-keys', payload: { user: v, customer_id: w.customerId } }),
      field: 'user',
    },
    id: {
      path: '$.merchants[0].customer_id',
      set: (d, v) => (d.merchants[0]!.customer_id = v),
      api: (_w, v) => ({ method: 'POST', url: '/v1/api-keys', payload: { user: 'new@alpha.test', customer_id: v } }),
      field: 'customer_id',
    },
  } satisfies Record<string, Door>;

  const refused: Array<[string, keyof typeof doors, string]> = [
    ['U+0000 in a merchant name', 'merchantName', 'Acme\u0000Store'],
    ['U+0000 alone as a customer name', 'customerName', '\u0000'],
    ['an unpaired surrogate in a name', 'merchantName', 'Acme \ud800'],
    ['U+0000 in a password', 'password', 'a-long-\u0000-password'],
    ['U+0000 in an e-mail', 'email', 'pos\u0000@acme.test'],
    ['an e-mail with two dots in a row', 'email', 'pos..till@acme.test'],
    ['an e-mail whose domain starts with a hyphen', 'email', 'pos@-acme.test'],
    ['an e-mail whose domain has no dot', 'email', 'pos@localhost'],
    ['an id in the urn:uuid: form', 'id', 'urn:uuid:c0000000-0000-4000-8000-000000000001'],
  ];
  for (const [name, door, value] of refused) {
    const { path, set, api, field } = doors[door];
    it(`refuses ${name} as the API does, naming ${path} with the API's message, and writes nothing`, async () => {
      const { app, world, token } = await customerSession(h);
      const before = await counts();
      const answer = await app.inject({ ...api(world, value), headers: bearer(token) });
      assert.equal(answer.statusCode, 400, answer.body);
      const apiMessage = (answer.json().errors as Array<{ field: string; message: string }>).find(
        (e) => e.field === field,
      )?.message;
      assert.ok(apiMessage, answer.body);
      const doc = validDocument();
      set(doc, value);
      await assert.rejects(app.services.importer.importDocument(doc), (err: unknown) => {
        assert.ok(err instanceof ImportError, String(err));
        assert.equal(err.path, path);
        assert.equal(err.reason, apiMessage);
        return true;
      });
      assert.deepEqual(await counts(), before);
    });
  }

  it('registers no format of its own: nothing else that checks with TypeBox gets a looser e-mail or UUID', async () => {
    await (await h.app()).services.importer.importDocument(validDocument());
    assert.deepEqual(FormatRegistry.Entries(), new Map());
  });

  it('accepts an e-mail the API accepts (apostrophe, plus, capitals, subdomain) and stores it in lower case', async () => {
    const { app, world, token } = await customerSession(h);
    const email = "O'Brien+Till@Shop.Acme.test";
    const answer = await app.inject({ ...doors.email.api(world, email), headers: bearer(token) });
    assert.equal(answer.statusCode, 201, answer.body);
    const doc = validDocument();
    doors.email.set(doc, email);
    await app.services.importer.importDocument(doc);
    const stored = await h.db.current.database.db
      .select()
      .from(users)
      .where(eq(users.customerId, doc.customers[0]!.id));
    assert.deepEqual(stored.map((u) => u.email).sort(), ["o'brien+till@shop.acme.test", 'ops@acme.test']);
  });

  it('accepts a name the API accepts (an emoji is one character, not a lone surrogate) and stores it exactly', async () => {
    const { app, token } = await customerSession(h);
    const name = 'Café ☕ 🍰';
    const answer = await app.inject({
      method: 'GET',
      url: `/v1/merchants?q=${encodeURIComponent(name)}`,
      headers: bearer(token),
    });
    assert.equal(answer.statusCode, 200, answer.body);
    const doc = validDocument();
    doors.merchantName.set(doc, name);
    await app.services.importer.importDocument(doc);
    const [merchant] = await h.db.current.database.db
      .select()
      .from(merchants)
      .where(eq(merchants.id, doc.merchants[0]!.id));
    assert.equal(merchant!.name, name);
  });

  it('accepts ids in upper case, stores them in lower case, and matches them to the same ids in lower case', async () => {
    const app = await h.app();
    const doc = validDocument();
    const shouted = JSON.parse(
      JSON.stringify(doc).replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, (id) => id.toUpperCase()),
    ) as Doc;
    assert.notEqual(shouted.merchants[0]!.id, doc.merchants[0]!.id, 'the ids of the file are in upper case');
    await app.services.importer.importDocument(shouted);
    const db = h.db.current.database.db;
    assert.deepEqual(
      (await db.select().from(customers)).map((c) => c.id),
      [doc.customers[0]!.id],
    );
    assert.deepEqual(
      (await db.select().from(merchants)).map((m) => [m.id, m.customerId]),
      [[doc.merchants[0]!.id, doc.customers[0]!.id]],
    );
    assert.deepEqual(
      (await db.select().from(paymentPlans)).map((p) => p.id),
      [doc.payment_plans[0]!.id],
    );
    assert.deepEqual(
      (await db.select().from(merchantPaymentPlans)).map((a) => [a.merchantId, a.paymentPlanId]),
      [[doc.merchants[0]!.id, doc.payment_plans[0]!.id]],
    );
    const first = await counts();
    await app.services.importer.importDocument(doc);
    assert.deepEqual(await counts(), first, 'the same records, not new ones');
  });
});
