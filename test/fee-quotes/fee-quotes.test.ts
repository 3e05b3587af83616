/** POST /v1/fee-quotes in JSON: quotes in order, the plan in force as fee-rules?at= finds it, per-item refusals, bad input. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import { merchantState, patchMerchant } from '../helpers/merchants.js';
import { apiKey, assignmentSnapshot, bulkAssign, feeRulesAt, plan } from '../helpers/plans.js';
import { postQuotes, seedQuotePlans, transaction } from '../helpers/quotes.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
/** Times are kept to the millisecond: a pause makes "before" and "after" distinct instants. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

async function setup() {
  const app = await h.app();
  return { app, ...(await seedQuotePlans(app)) };
}

/** Everything a quote could change if it wrote: assignments, merchants, audit records, events. */
async function state() {
  const database = h.db.current.database;
  return JSON.stringify([await assignmentSnapshot(database), await merchantState(database)]);
}

describe('POST /v1/fee-quotes: happy', () => {
  it('quotes every transaction in order under the plan in force, with exact half-to-even rounding', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    const res = await postQuotes(app, headers, {
      transactions: [
        // 0.20 × 2.5% = 0.005 → 0.00 (even, down); 0.60 × 2.5% = 0.015 → 0.02 (even, up).
        transaction(m0, { id: 'half-down', amount: '0.20' }),
        transaction(m0, { id: 'half-up', amount: '0.60' }),
        // 3 installments: 1234.56 ARS × 3.89% = 48.0243... → 48.02.
        transaction(m0, { id: 'three', amount: '1234.56', currency: 'ars', installments: 3 }),
        // CLP has no decimals: 1500 × 2.99% = 44.85 → 45.
        transaction(m1, { amount: '1500', currency: 'CLP' }),
        transaction(m0, { card_brand: 'mastercard', amount: '10' }),
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const { quotes } = json(res);
    const at = quotes[0].at;
    assert.ok(Math.abs(Date.parse(at) - Date.now()) < 60_000);
    assert.deepEqual(quotes, [
      {
        id: 'half-down',
        merchant_id: m0,
        payment_plan_id: plans.visaHalf.id,
        commission: 2.5,
        fee: '0.00',
        net: '0.20',
        currency: 'USD',
        at,
      },
      {
        id: 'half-up',
        merchant_id: m0,
        payment_plan_id: plans.visaHalf.id,
        commission: 2.5,
        fee: '0.02',
        net: '0.58',
        currency: 'USD',
        at,
      },
      {
        id: 'three',
        merchant_id: m0,
        payment_plan_id: plans.visa3.id,
        commission: 3.89,
        fee: '48.02',
        net: '1186.54',
        currency: 'ARS',
        at,
      },
      {
        id: null,
        merchant_id: m1,
        payment_plan_id: plans.visa1.id,
        commission: 2.99,
        fee: '45',
        net: '1455',
        currency: 'CLP',
        at,
      },
      {
        id: null,
        merchant_id: m0,
        payment_plan_id: plans.master1.id,
        commission: 2.89,
        fee: '0.29',
        net: '9.71',
        currency: 'USD',
        at,
      },
    ]);
  });

  it('answers past instants across a bulk assignment, and future ones across a scheduled change, as fee-rules?at= does', async () => {
    const { app, headers, plans, m0 } = await setup();
    await tick();
    const before = new Date();
    await tick();
    // visa1 (2.99%) replaces visaHalf on m0.
    const assigned = await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa1.id] });
    assert.equal(assigned.statusCode, 201, assigned.body);
    const effectiveAt = new Date(Date.now() + 60_000);
    const scheduled = await bulkAssign(app, headers, {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visaHalf.id],
      effective_at: effectiveAt.toISOString(),
    });
    assert.equal(scheduled.statusCode, 202, scheduled.body);
    const later = new Date(effectiveAt.getTime() + 1000);
    for (const [at, expected] of [
      [before, plans.visaHalf],
      [new Date(), plans.visa1],
      [later, plans.visaHalf],
    ] as const) {
      const res = await postQuotes(app, headers, { at: at.toISOString(), transactions: [transaction(m0)] });
      assert.equal(res.statusCode, 200, res.body);
      const [quote] = json(res).quotes;
      assert.equal(quote.payment_plan_id, expected.id, at.toISOString());
      assert.equal(quote.at, at.toISOString());
      const listed = json(await feeRulesAt(app, headers, m0, at)).data.find(
        (p: { card_brand: string; term: number; has_installments: boolean }) =>
          p.card_brand === 'VISA' && p.term === 1 && !p.has_installments,
      );
      assert.equal(listed.id, quote.payment_plan_id, 'the plan fee-rules?at= lists');
    }
  });

  it('refuses a transaction alone (no plan in force, unknown or foreign merchant, INACTIVE merchant) and quotes the rest', async () => {
    const { app, headers, plans, m0, m1, o0 } = await setup();
    assert.equal((await patchMerchant(app, headers, m1, { status: 'INACTIVE' })).statusCode, 200);
    const missing = uuid('d');
    const res = await postQuotes(app, headers, {
      transactions: [
        transaction(m0, { id: 'a' }),
        transaction(m0, { id: 'b', installments: 6 }),
        transaction(m0, { id: 'c', is_international: true }),
        transaction(o0, { id: 'd' }),
        transaction(missing, { id: 'e' }),
        transaction(m1, { id: 'f' }),
        transaction(m0.toUpperCase(), { id: 'g' }),
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const quotes = json(res).quotes as Array<Record<string, any>>;
    assert.deepEqual(
      quotes.map((q) => [q.id, q.merchant_id, q.error?.code ?? q.payment_plan_id]),
      [
        ['a', m0, plans.visaHalf.id],
        ['b', m0, 'no_plan_in_force'],
        ['c', m0, 'no_plan_in_force'],
        ['d', o0, 'merchant_not_found'],
        ['e', missing, 'merchant_not_found'],
        ['f', m1, 'merchant_inactive'],
        ['g', m0, plans.visaHalf.id],
      ],
    );
    assert.equal(typeof quotes[1]!.error.detail, 'string');
    assert.equal('fee' in quotes[1]!, false);
  });

  it('sees a status change at once: made through the API on this instance, or by hand in the database (pushed)', async () => {
    const { app, headers, plans, m1 } = await setup();
    const quoted = async () => {
      const res = await postQuotes(app, headers, { transactions: [transaction(m1, { id: 'x' })] });
      assert.equal(res.statusCode, 200, res.body);
      const [quote] = json(res).quotes;
      return quote.error?.code ?? quote.payment_plan_id;
    };
    const visa = plans.visa1.id;
    assert.equal(await quoted(), visa, 'quoted, and its status now held in memory');
    assert.equal((await patchMerchant(app, headers, m1, { status: 'INACTIVE' })).statusCode, 200);
    assert.equal(await quoted(), 'merchant_inactive', 'the PATCH dropped what this instance held before answering');
    assert.equal((await patchMerchant(app, headers, m1, { status: 'ACTIVE' })).statusCode, 200);
    assert.equal(await quoted(), visa);
    // An operator by hand (or another instance, or the import): only the trigger's notice can tell this one.
    await h.db.current.database.db.execute(sql`UPDATE merchants SET status = 'INACTIVE' WHERE id = ${m1}::uuid`);
    await waitFor(async () => (await quoted()) === 'merchant_inactive', 'the pushed change reaches the quotes', {
      timeoutMs: 10_000,
    });
  });

  it('never prices by a plan of term 0: installments are at least 1, and the term must equal them (contract section 24)', async () => {
    const { app, headers, m1 } = await setup();
    const debit0 = plan({ payment_method: 'DEBIT', term: 0, commission: 1.49 });
    await app.services.importer.importDocument({
      payment_plans: [debit0],
      assignments: [{ merchant_id: m1, payment_plan_ids: [debit0.id] }],
    });
    const res = await postQuotes(app, headers, { transactions: [transaction(m1, { payment_method: 'DEBIT' })] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).quotes[0].error.code, 'no_plan_in_force');
  });

  it('lets a merchant key quote its own merchant only, and a read-only key quote at all', async () => {
    const { app, world, m0, m1 } = await setup();
    const merchantKey = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const res = await postQuotes(app, apiKey(merchantKey.api_key), {
      transactions: [transaction(m0), transaction(m1)],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      json(res).quotes.map((q: Record<string, any>) => q.error?.code ?? 'quoted'),
      ['quoted', 'merchant_not_found'],
    );
    const readOnly = await issueKey(
      app,
      { user: 'reader@alpha.test', customerId: world.customerId },
      { access: 'read_only' },
    );
    const byReadOnly = await postQuotes(app, apiKey(readOnly.api_key), { transactions: [transaction(m1)] });
    assert.equal(byReadOnly.statusCode, 200, byReadOnly.body);
    assert.equal(json(byReadOnly).quotes[0].fee, '3.00');
  });
});

describe('POST /v1/fee-quotes: permissions', () => {
  it('needs fee_rules:read of a key (403 insufficient_permissions, before anything is read), and nothing more', async () => {
    const { app, world, m0 } = await setup();
    const owner = (user: string) => ({ user, customerId: world.customerId });
    const without = await issueKey(app, owner('merchants@alpha.test'), { permissions: ['merchants:read'] });
    const refused = await postQuotes(app, apiKey(without.api_key), { transactions: [transaction(m0)] });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(json(refused).code, 'insufficient_permissions');
    assert.equal(json(refused).required_permission, 'fee_rules:read');
    const only = await issueKey(app, owner('quotes@alpha.test'), { permissions: ['fee_rules:read'] });
    const quoted = await postQuotes(app, apiKey(only.api_key), { transactions: [transaction(m0)] });
    assert.equal(quoted.statusCode, 200, quoted.body);
  });
});

describe('POST /v1/fee-quotes: bad input is a 400 naming the item and field, and changes nothing', () => {
  const cases: Array<[string, (m0: string) => Record<string, unknown>, string, RegExp]> = [
    ['amount as a number', (m0) => transaction(m0, { amount: 100.5 }), 'transactions[1].amount', /must be a string/],
    ['a negative amount', (m0) => transaction(m0, { amount: '-1.00' }), 'transactions[1].amount', /positive decimal/],
    ['a zero amount', (m0) => transaction(m0, { amount: '0.00' }), 'transactions[1].amount', /greater than zero/],
    ['too many decimals', (m0) => transaction(m0, { amount: '1.005' }), 'transactions[1].amount', /at most 2 decimals/],
    [
      'decimals in CLP',
      (m0) => transaction(m0, { amount: '1.5', currency: 'CLP' }),
      'transactions[1].amount',
      /no decimals/,
    ],
    [
      'more than 10^13 minor units',
      (m0) => transaction(m0, { amount: '100000000000.01' }),
      'transactions[1].amount',
      /10\^13 minor units/,
    ],
    ['an unknown currency', (m0) => transaction(m0, { currency: 'XYZ' }), 'transactions[1].currency', /ISO 4217/],
    [
      'negative installments',
      (m0) => transaction(m0, { installments: -1 }),
      'transactions[1].installments',
      /at least 0/,
    ],
  ];
  for (const [what, bad, field, message] of cases) {
    it(`refuses ${what}`, async () => {
      const { app, headers, m0 } = await setup();
      const before = await state();
      const res = await postQuotes(app, headers, { transactions: [transaction(m0), bad(m0)] });
      assert.equal(res.statusCode, 400, res.body);
      const body = json(res);
      assert.equal(body.code, 'validation_failed');
      const named = body.errors.find((e: { field: string }) => e.field === field);
      assert.ok(named, `${field} in ${res.body}`);
      assert.match(named.message, message);
      assert.equal('quotes' in body, false);
      assert.equal(await state(), before);
    });
  }

  it('refuses more than 1,000 transactions, and none', async () => {
    const { app, headers, m0 } = await setup();
    const before = await state();
    const many = await postQuotes(app, headers, { transactions: Array.from({ length: 1001 }, () => transaction(m0)) });
    assert.equal(many.statusCode, 400, many.body);
    assert.deepEqual(json(many).errors, [{ field: 'transactions', message: 'must have at most 1000 items' }]);
    const none = await postQuotes(app, headers, { transactions: [] });
    assert.equal(none.statusCode, 400, none.body);
    const thousand = await postQuotes(app, headers, {
      transactions: Array.from({ length: 1000 }, () => transaction(m0)),
    });
    assert.equal(thousand.statusCode, 200);
    assert.equal(json(thousand).quotes.length, 1000);
    assert.equal(await state(), before);
  });

  it('refuses a body that is not JSON (400), one of another type (415), none (400), and a bad instant (400)', async () => {
    const { app, headers, m0 } = await setup();
    const before = await state();
    const broken = await app.inject({
      method: 'POST',
      url: '/v1/fee-quotes',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"transactions": [',
    });
    assert.equal(broken.statusCode, 400);
    assert.equal(json(broken).code, 'malformed_json');
    const text = await app.inject({
      method: 'POST',
      url: '/v1/fee-quotes',
      headers: { ...headers, 'content-type': 'text/csv' },
      payload: 'merchant_id,amount',
    });
    assert.equal(text.statusCode, 415);
    assert.equal(json(text).code, 'unsupported_media_type');
    const none = await app.inject({ method: 'POST', url: '/v1/fee-quotes', headers });
    assert.equal(none.statusCode, 400, none.body);
    assert.equal(json(none).code, 'validation_failed');
    const badAt = await postQuotes(app, headers, { at: 'yesterday', transactions: [transaction(m0)] });
    assert.equal(badAt.statusCode, 400);
    assert.equal(json(badAt).errors[0].field, 'at');
    const unknownField = await postQuotes(app, headers, { transactions: [transaction(m0, { fee: '1.00' })] });
    assert.equal(unknownField.statusCode, 400);
    assert.equal(json(unknownField).errors[0].field, 'transactions[0].fee');
    assert.equal(await state(), before);
  });

  it('refuses a caller without credentials (401)', async () => {
    const { app, m0 } = await setup();
    const res = await postQuotes(app, {}, { transactions: [transaction(m0)] });
    assert.equal(res.statusCode, 401);
  });
});
