/** The import checks what the API checks, with the API's own words: e-mails, names, ids, text. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FormatRegistry } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { customers, merchantPaymentPlans, merchants, paymentPlans, users } from '../../src/db/schema.js';
import type { InjectOptions } from 'fastify';
import { ImportError } from '../../src/errors.js';
import { bearer, useTestApp } from '../helpers/app.js';
import { customerSession, type World } from '../helpers/fixtures.js';
import { importCounts, validImportDocument } from '../helpers/import-documents.js';

const h = useTestApp();
const counts = () => importCounts(h.db.current.database);

describe("import: the API's rules, in the API's words", () => {
  type Doc = ReturnType<typeof validImportDocument>;
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
      const doc = validImportDocument();
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
    await (await h.app()).services.importer.importDocument(validImportDocument());
    assert.deepEqual(FormatRegistry.Entries(), new Map());
  });

  it('accepts an e-mail the API accepts (apostrophe, plus, capitals, subdomain) and stores it in lower case', async () => {
    const { app, world, token } = await customerSession(h);
    const email = "O'Brien+Till@Shop.Acme.test";
    const answer = await app.inject({ ...doors.email.api(world, email), headers: bearer(token) });
    assert.equal(answer.statusCode, 201, answer.body);
    const doc = validImportDocument();
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
    const doc = validImportDocument();
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
    const doc = validImportDocument();
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
