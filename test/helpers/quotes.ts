/** Helpers for fee quote tests: transactions, the endpoint in JSON and NDJSON, and a catalogue with rates that make exact halves. */
import type { FastifyInstance } from 'fastify';
import { bearer } from './app.js';
import { loginAs, seedWorld } from './fixtures.js';
import { type Credentials, plan } from './plans.js';

/** A VISA domestic credit transaction of 100.50 USD in one payment unless told otherwise. */
export function transaction(merchantId: string, overrides: Record<string, unknown> = {}) {
  return {
    merchant_id: merchantId,
    amount: '100.50',
    currency: 'USD',
    card_brand: 'VISA',
    payment_method: 'CREDIT',
    installments: 1,
    is_international: false,
    ...overrides,
  };
}

export function postQuotes(app: FastifyInstance, credentials: Credentials, payload: unknown) {
  return app.inject({ method: 'POST', url: '/v1/fee-quotes', headers: credentials, payload: payload as object });
}

export function postQuoteLines(app: FastifyInstance, credentials: Credentials, lines: string[]) {
  return app.inject({
    method: 'POST',
    url: '/v1/fee-quotes',
    headers: { ...credentials, 'content-type': 'application/x-ndjson' },
    payload: `${lines.join('\n')}\n`,
  });
}

/** The lines of an NDJSON answer, parsed. */
export function answerLines(body: string): Array<Record<string, any>> {
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/**
 * Alpha's merchants m0 (VISA credit 1x at 2.5%, 3x at 3.89%, MASTERCARD 1x at
 * 2.89%) and m1 (VISA credit 1x at 2.99%); Beta's o0. Alpha's token headers.
 */
export async function seedQuotePlans(app: FastifyInstance) {
  const plans = {
    visaHalf: plan({ commission: 2.5 }),
    visa3: plan({ term: 3, commission: 3.89, has_installments: true }),
    master1: plan({ card_brand: 'MASTERCARD', commission: 2.89 }),
    visa1: plan({ commission: 2.99 }),
  };
  const world = await seedWorld(app, { payment_plans: Object.values(plans) });
  const [m0, m1] = world.merchantIds as [string, string];
  const [o0] = world.otherMerchantIds as [string];
  await app.services.importer.importDocument({
    assignments: [
      { merchant_id: m0, payment_plan_ids: [plans.visaHalf.id, plans.visa3.id, plans.master1.id] },
      { merchant_id: m1, payment_plan_ids: [plans.visa1.id] },
      { merchant_id: o0, payment_plan_ids: [plans.visa1.id] },
    ],
  });
  const token = await loginAs(app, world.login);
  return { world, plans, m0, m1, o0, headers: bearer(token.access_token) };
}
