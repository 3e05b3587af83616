/** POST /v1/fee-quotes: which plan is in force for a transaction's installments, a debit-like plan of term 0 included. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json, useTestApp } from '../helpers/app.js';
import { plan } from '../helpers/plans.js';
import { postQuotes, seedQuotePlans, transaction } from '../helpers/quotes.js';

const h = useTestApp();

async function setup() {
  const app = await h.app();
  return { app, ...(await seedQuotePlans(app)) };
}

describe('POST /v1/fee-quotes: a debit-like plan (term 0)', () => {
  it('is the plan in force for installments 0, and never for 1', async () => {
    const { app, headers, plans, m0 } = await setup();
    const debit = plan({ payment_method: 'DEBIT', term: 0, commission: 1.2 });
    const held = [plans.visaHalf.id, plans.visa3.id, plans.master1.id, debit.id];
    await app.services.importer.importDocument({
      payment_plans: [debit],
      assignments: [{ merchant_id: m0, payment_plan_ids: held }],
    });
    const res = await postQuotes(app, headers, {
      transactions: [
        transaction(m0, { payment_method: 'debit', installments: 0, amount: '100.00' }),
        transaction(m0, { payment_method: 'DEBIT', installments: 1, amount: '100.00' }),
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const [quoted, unmatched] = json(res).quotes;
    assert.equal(quoted.payment_plan_id, debit.id);
    assert.deepEqual([quoted.fee, quoted.net], ['1.20', '98.80']);
    assert.equal(unmatched.error.code, 'no_plan_in_force', 'term 0 is not one installment');
  });
});
