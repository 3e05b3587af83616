/**
 * Helpers for payment plan and fee rule tests: plans for the import document,
 * the assignment endpoints, and what merchant_payment_plans holds.
 */
import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { merchantPaymentPlans } from '../../src/db/schema.js';
import type { ImportDocument } from '../../src/features/operator/import-schema.js';
import { bearer, type Harness, type Injected } from './app.js';
import { loginAs, seedWorld, uuid, type World } from './fixtures.js';

export type PlanInput = NonNullable<ImportDocument['payment_plans']>[number];

/** A plan for the import document: VISA domestic credit 1x unless told otherwise. */
export function plan(overrides: Partial<PlanInput> = {}): PlanInput {
  return {
    id: uuid('e'),
    payment_method: 'CREDIT',
    card_brand: 'VISA',
    term: 1,
    commission: 2.99,
    has_installments: false,
    is_international: false,
    ...overrides,
  };
}

/** Request headers of a caller: `bearer(token)` from app.ts, or `apiKey(key)`. */
export type Credentials = InjectOptions['headers'];

export function apiKey(key: string): Credentials {
  return { 'x-api-key': key };
}

/** `query` is appended as it is, e.g. '?dry_run=true'. */
export function bulkAssign(app: FastifyInstance, credentials: Credentials, payload: unknown, query = '') {
  return app.inject({
    method: 'POST',
    url: `/v1/fee-rules/bulk-assign${query}`,
    headers: credentials,
    payload: payload as object,
  });
}

export function bulkAssignAll(app: FastifyInstance, credentials: Credentials, payload: unknown, query = '') {
  return app.inject({
    method: 'POST',
    url: `/v1/fee-rules/bulk-assign/all${query}`,
    headers: credentials,
    payload: payload as object,
  });
}

/** GET /v1/merchants/{id}/fee-rules, at an instant or now. */
export function feeRulesAt(app: FastifyInstance, credentials: Credentials, merchantId: string, at?: Date | string) {
  const query = at === undefined ? '' : `?at=${encodeURIComponent(typeof at === 'string' ? at : at.toISOString())}`;
  return app.inject({ method: 'GET', url: `/v1/merchants/${merchantId}/fee-rules${query}`, headers: credentials });
}

/** Every assignment as sorted "merchant plan" lines: equal snapshots mean nothing changed. */
export async function assignmentSnapshot(database: Database): Promise<string[]> {
  const rows = await database.db.select().from(merchantPaymentPlans);
  return rows.map((r) => `${r.merchantId} ${r.paymentPlanId}`).sort();
}

/** The plans each merchant holds, sorted; merchants without plans are absent. */
export async function plansByMerchant(database: Database): Promise<Map<string, string[]>> {
  const byMerchant = new Map<string, string[]>();
  for (const line of await assignmentSnapshot(database)) {
    const [merchantId, planId] = line.split(' ') as [string, string];
    byMerchant.set(merchantId, [...(byMerchant.get(merchantId) ?? []), planId]);
  }
  return byMerchant;
}

/**
 * The catalogue that fee rule and plan tests share: two customers from
 * seedWorld, platform plans, one plan of each customer, and assignments to
 * start from. Returns Alpha's token headers.
 */
export async function seedCatalogue(app: FastifyInstance) {
  const world: World = await seedWorld(app);
  const plans = {
    visa1: plan({ card_brand: 'VISA', term: 1, commission: 2.99 }),
    // Alpha's negotiated rate: same kind and term as visa1.
    visa1Own: plan({ customer_id: world.customerId, card_brand: 'VISA', term: 1, commission: 2.49 }),
    visa3: plan({ card_brand: 'VISA', term: 3, commission: 3.89, has_installments: true }),
    visa6: plan({ card_brand: 'VISA', term: 6, commission: 5.2375, has_installments: true }),
    visaIntl: plan({ card_brand: 'VISA', term: 1, commission: 4.49, is_international: true }),
    visaDebit: plan({ card_brand: 'VISA', payment_method: 'DEBIT', term: 0, commission: 1.49 }),
    master1: plan({ card_brand: 'MASTERCARD', term: 1, commission: 2.89 }),
    // Beta's own plan: does not exist for Alpha.
    foreign: plan({ customer_id: world.otherCustomerId, card_brand: 'VISA', term: 1, commission: 1.99 }),
  };
  const [m0, m1] = world.merchantIds as [string, string];
  const [o0, o1] = world.otherMerchantIds as [string, string];
  await app.services.importer.importDocument({
    payment_plans: Object.values(plans),
    assignments: [
      { merchant_id: m0, payment_plan_ids: [plans.visa1.id, plans.visa3.id, plans.visaDebit.id, plans.master1.id] },
      { merchant_id: m1, payment_plan_ids: [plans.visa1.id, plans.visaIntl.id] },
      { merchant_id: o0, payment_plan_ids: [plans.visa1.id] },
      { merchant_id: o1, payment_plan_ids: [plans.foreign.id, plans.visa3.id] },
    ],
  });
  const token = await loginAs(app, world.login);
  return { world, plans, m0, m1, o0, o1, headers: bearer(token.access_token) };
}

export type Catalogue = Awaited<ReturnType<typeof seedCatalogue>>;

/** The harness's app with the catalogue seeded: where most fee rule tests start. */
export async function appWithCatalogue(h: Harness) {
  const app = await h.app();
  return { app, ...(await seedCatalogue(app)) };
}

/** An assignment's answer: 201 and no body, since the API returns nothing it did not make. */
export function assertCreated(res: Injected) {
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.body, '');
  assert.equal(res.headers['content-type'], undefined);
}

/** A sorted copy, to compare id lists whose order the API does not promise. */
export const sorted = (ids: string[]) => [...ids].sort();

/** A plan of the caller's own to create, its codes in mixed case as a client may send them. */
export const NEW_PLAN = {
  payment_method: 'credit',
  card_brand: 'Visa',
  term: 12,
  commission: 7.125,
  has_installments: true,
  is_international: false,
};

/** The catalogue's routes (GET/POST /v1/fee-rules, DELETE /v1/fee-rules/{id}) and one merchant's assignment. */
export const feeRuleRequests = {
  list: (app: FastifyInstance, headers: Credentials, query = '') =>
    app.inject({ method: 'GET', url: `/v1/fee-rules${query}`, headers }),
  create: (app: FastifyInstance, headers: Credentials, payload: unknown) =>
    app.inject({ method: 'POST', url: '/v1/fee-rules', headers, payload: payload as object }),
  retire: (app: FastifyInstance, headers: Credentials, id: string) =>
    app.inject({ method: 'DELETE', url: `/v1/fee-rules/${id}`, headers }),
  assignOne: (app: FastifyInstance, headers: Credentials, merchantId: string, payload: unknown, query = '') =>
    app.inject({
      method: 'POST',
      url: `/v1/merchants/${merchantId}/fee-rules${query}`,
      headers,
      payload: payload as object,
    }),
};
