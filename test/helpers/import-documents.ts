/** Import documents for the import tests: a valid one to break, and the counts a refused import must leave. */
import { count } from 'drizzle-orm';
import type { Database } from '../../src/db/database.js';
import { customers, merchantPaymentPlans, merchants, paymentPlans, users } from '../../src/db/schema.js';
import { uuid } from './fixtures.js';
import { plan } from './plans.js';

/** How many customers, merchants, users, plans and assignments there are. */
export async function importCounts(database: Database) {
  const db = database.db;
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

/** A document of one of each kind of record, fresh ids each time. */
export function validImportDocument() {
  const customer = uuid('c');
  const merchant = uuid('d');
  const visa = plan();
  return {
    customers: [{ id: customer, name: 'Acme' }],
    merchants: [{ id: merchant, customer_id: customer, name: 'Acme Store' }],
    users: [
      { email: 'ops@acme.test', type: 'CUSTOMER', customer_id: customer, password: 'a-long-password' },
      { email: 'pos@acme.test', type: 'MERCHANT', customer_id: customer, merchant_id: merchant },
    ],
    payment_plans: [visa],
    assignments: [{ merchant_id: merchant, payment_plan_ids: [visa.id] }],
  };
}
