/**
 * A request of each POST and PATCH that changes something, each made ready on a
 * customer of its own, for the tests that walk every such operation
 * (test/idempotency/answer-with-change.test.ts).
 */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json } from './app.js';
import { heldRequest, setPolicy } from './change-requests.js';
import { loginAs, uuid } from './fixtures.js';
import { argentineMerchant } from './merchants.js';
import { plan } from './plans.js';
import { createUser, userWithRole } from './users.js';
import { waitFor } from './wait.js';
import { type Receiver, subscribe } from './webhooks.js';

type Request = {
  method: 'POST' | 'PATCH';
  url: string;
  payload?: object;
  /** Another caller than the seeded owner (a second ADMIN approving). */
  headers?: Record<string, string>;
  /** The change ends the caller's own login: its retry is refused before any replay, so only the stored row is looked at. */
  endsLogin?: boolean;
};
/** The platform's plans, seeded once for every case. */
export const PLATFORM_PLANS = {
  visa1: plan({ card_brand: 'VISA', term: 1, commission: 2.99 }),
  visa3: plan({ card_brand: 'VISA', term: 3, commission: 3.89, has_installments: true }),
  visa6: plan({ card_brand: 'VISA', term: 6, commission: 5.2375, has_installments: true }),
  visaIntl: plan({ card_brand: 'VISA', term: 1, commission: 4.49, is_international: true }),
  visaDebit: plan({ card_brand: 'VISA', payment_method: 'DEBIT', term: 0, commission: 1.49 }),
  master1: plan({ card_brand: 'MASTERCARD', term: 1, commission: 2.89 }),
};
type Plans = typeof PLATFORM_PLANS & { visa1Own: ReturnType<typeof plan> };
/** A case's own customer: one app and database serve every case, and no case sees another's changes. */
export type Seeded = {
  app: FastifyInstance;
  receiver: Receiver;
  token: string;
  headers: Record<string, string>;
  world: { customerId: string; login: { user: string; password: string } };
  plans: Plans;
  m0: string;
  m1: string;
  /** The case's e-mail domain: user addresses are unique across customers. */
  domain: string;
};

/** A request of each operation that changes something, made ready by what it needs first. */
export const CHANGING_REQUESTS: Record<string, (s: Seeded) => Promise<Request>> = {
  'POST /v1/logout': async () => ({ method: 'POST', url: '/v1/logout', endsLogin: true }),
  'POST /v1/logout/all': async () => ({ method: 'POST', url: '/v1/logout/all', endsLogin: true }),
  'POST /v1/merchants': async (s) => ({
    method: 'POST',
    url: '/v1/merchants',
    payload: argentineMerchant(s.world.customerId),
  }),
  'POST /v2/merchants': async (s) => ({
    method: 'POST',
    url: '/v2/merchants',
    payload: argentineMerchant(s.world.customerId, { tax_identification: { type: 'CUIT', number: '20-26756539-3' } }),
  }),
  'PATCH /v1/merchants/{id}': async (s) => ({
    method: 'PATCH',
    url: `/v1/merchants/${s.m0}`,
    payload: { fantasy_name: 'Renamed once' },
  }),
  'PATCH /v2/merchants/{id}': async (s) => ({
    method: 'PATCH',
    url: `/v2/merchants/${s.m1}`,
    payload: { fantasy_name: 'Renamed twice' },
  }),
  'POST /v1/fee-rules/bulk-assign': async (s) => ({
    method: 'POST',
    url: '/v1/fee-rules/bulk-assign',
    payload: { merchant_ids: [s.m0], payment_plan_ids: [s.plans.visa1Own.id] },
  }),
  'POST /v1/fee-rules/bulk-assign/all': async (s) => ({
    method: 'POST',
    url: '/v1/fee-rules/bulk-assign/all',
    payload: { payment_plan_ids: [s.plans.visa1.id, s.plans.master1.id] },
  }),
  'POST /v1/merchants/{id}/fee-rules': async (s) => ({
    method: 'POST',
    url: `/v1/merchants/${s.m1}/fee-rules`,
    payload: { payment_plan_ids: [s.plans.visa3.id] },
  }),
  'POST /v1/fee-rules': async () => ({
    method: 'POST',
    url: '/v1/fee-rules',
    payload: {
      payment_method: 'CREDIT',
      card_brand: 'VISA',
      term: 12,
      commission: 7.5,
      has_installments: true,
      is_international: false,
    },
  }),
  'POST /v1/api-keys': async (s) => ({
    method: 'POST',
    url: '/v1/api-keys',
    payload: { user: `integration@${s.domain}`, customer_id: s.world.customerId },
  }),
  'POST /auth/users': async (s) => ({
    method: 'POST',
    url: '/auth/users',
    payload: { user: `pos@${s.domain}`, user_type: 'MERCHANT', customer_id: s.world.customerId, merchant_id: s.m0 },
  }),
  'PATCH /v1/api-keys/{id}': async (s) => ({
    method: 'PATCH',
    url: `/v1/api-keys/${await keyOf(s)}`,
    payload: { name: 'Renamed key' },
  }),
  'POST /v1/api-keys/{id}/roll': async (s) => ({ method: 'POST', url: `/v1/api-keys/${await keyOf(s)}/roll` }),
  'POST /v1/webhooks': async (s) => ({
    method: 'POST',
    url: '/v1/webhooks',
    payload: {
      notification_url: s.receiver.url,
      notification_type: ['API_KEY_ROLLED'],
      secret_key: 'Whsec-Alpha-2026',
    },
  }),
  'POST /v1/webhooks/mock/send-payment-notification': async () => ({
    method: 'POST',
    url: '/v1/webhooks/mock/send-payment-notification',
  }),
  'PATCH /v1/webhooks/{id}': async (s) => ({
    method: 'PATCH',
    url: `/v1/webhooks/${await hookOf(s)}`,
    payload: { notification_type: ['API_KEY_REVOKED'] },
  }),
  'POST /v1/webhooks/{id}/test': async (s) => ({ method: 'POST', url: `/v1/webhooks/${await hookOf(s)}/test` }),
  'POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry': async (s) => {
    const hook = await hookOf(s);
    await s.app.inject({ method: 'POST', url: `/v1/webhooks/${hook}/test`, headers: s.headers });
    let delivery: string | undefined;
    await waitFor(async () => {
      const listed = await s.app.inject({ method: 'GET', url: `/v1/webhooks/${hook}/deliveries`, headers: s.headers });
      delivery = json(listed).data[0]?.id;
      return delivery !== undefined;
    }, 'no delivery was made');
    return { method: 'POST', url: `/v1/webhooks/${hook}/deliveries/${delivery}/retry` };
  },
  'POST /v1/users': async (s) => ({ method: 'POST', url: '/v1/users', payload: { email: `new@${s.domain}` } }),
  'PATCH /v1/users/{id}': async (s) => ({
    method: 'PATCH',
    url: `/v1/users/${await userOf(s)}`,
    payload: { role: 'VIEWER' },
  }),
  'POST /v1/users/{id}/reset-password': async (s) => ({
    method: 'POST',
    url: `/v1/users/${await userOf(s)}/reset-password`,
  }),
  'POST /v1/users/me/password': async (s) => ({
    method: 'POST',
    url: '/v1/users/me/password',
    payload: { current_password: s.world.login.password, new_password: 'a quiet violet harbour at noon' },
  }),
  'POST /v1/users/me/mfa/totp': async (s) => ({
    method: 'POST',
    url: '/v1/users/me/mfa/totp',
    payload: { current_password: s.world.login.password },
  }),
  'POST /v1/users/me/mfa/totp/verify': async (s) => {
    const started = await s.app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp',
      headers: s.headers,
      payload: { current_password: s.world.login.password },
    });
    return { method: 'POST', url: '/v1/users/me/mfa/totp/verify', payload: { code: totpCode(json(started).secret) } };
  },
  'PATCH /v1/customers/me': async () => ({ method: 'PATCH', url: '/v1/customers/me', payload: { require_mfa: false } }),
  'POST /v1/fee-rules/bulk-assign, held for approval (202 and Location)': async (s) => {
    await approvalRequired(s);
    return { method: 'POST', url: '/v1/fee-rules/bulk-assign', payload: assignment(s) };
  },
  'POST /v1/change-requests/{id}/approve': async (s) => {
    const { id, checker } = await heldChange(s);
    return { method: 'POST', url: `/v1/change-requests/${id}/approve`, headers: checker, payload: {} };
  },
  'POST /v1/change-requests/{id}/reject': async (s) => {
    const { id, checker } = await heldChange(s);
    return { method: 'POST', url: `/v1/change-requests/${id}/reject`, headers: checker, payload: { reason: 'no' } };
  },
  'POST /v1/change-requests/{id}/cancel': async (s) => ({
    method: 'POST',
    url: `/v1/change-requests/${(await heldChange(s)).id}/cancel`,
  }),
};

const assignment = (s: Seeded) => ({ merchant_ids: [s.m0], payment_plan_ids: [s.plans.visa6.id] });

/** The seeded customer under the REQUIRED policy, with a second ADMIN to approve. */
async function approvalRequired(s: Seeded): Promise<Record<string, string>> {
  const checker = await userWithRole(s.app, s.token, `checker@${s.domain}`, 'ADMIN');
  assert.equal((await setPolicy(s.app, s.headers, 'REQUIRED')).statusCode, 200);
  return { authorization: `Bearer ${checker.token}` };
}

/** A bulk assignment held for approval, and the second ADMIN's headers. */
async function heldChange(s: Seeded): Promise<{ id: string; checker: Record<string, string> }> {
  const checker = await approvalRequired(s);
  const held = await s.app.inject({
    method: 'POST',
    url: '/v1/fee-rules/bulk-assign',
    headers: s.headers,
    payload: assignment(s),
  });
  return { id: heldRequest(held).id, checker };
}

async function keyOf(s: Seeded): Promise<string> {
  const made = await s.app.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers: s.headers,
    payload: { user: `other@${s.domain}`, customer_id: s.world.customerId },
  });
  return json(made).id;
}

async function hookOf(s: Seeded): Promise<string> {
  return subscribe(s.app, { token: s.token }, s.receiver.url);
}

async function userOf(s: Seeded): Promise<string> {
  return (await createUser(s.app, s.token, { email: `member@${s.domain}` })).attributes.id;
}

let cases = 0;

/** A customer of its own for a case: two merchants, an ADMIN owner logged in, its own plan, and assignments to start from. */
export async function seedCaseCustomer(app: FastifyInstance, receiver: Receiver): Promise<Seeded> {
  const domain = `case${++cases}.test`;
  const customerId = uuid('c');
  const [m0, m1] = [uuid('d'), uuid('d')];
  const login = { user: `owner@${domain}`, password: 'alpha-password-1' };
  // Its negotiated rate: same kind and term as the platform's visa1.
  const plans: Plans = { ...PLATFORM_PLANS, visa1Own: plan({ customer_id: customerId, term: 1, commission: 2.49 }) };
  await app.services.importer.importDocument({
    customers: [{ id: customerId, name: `Case ${cases}` }],
    merchants: [m0, m1].map((id, i) => ({ id, customer_id: customerId, name: `Case ${cases} shop ${i}` })),
    users: [{ email: login.user, type: 'CUSTOMER', customer_id: customerId, password: login.password }],
    payment_plans: [plans.visa1Own],
    assignments: [
      { merchant_id: m0, payment_plan_ids: [plans.visa1.id, plans.visa3.id, plans.visaDebit.id, plans.master1.id] },
      { merchant_id: m1, payment_plan_ids: [plans.visa1.id, plans.visaIntl.id] },
    ],
  });
  const token = (await loginAs(app, login)).access_token;
  return {
    app,
    receiver,
    token,
    headers: bearer(token) as Record<string, string>,
    world: { customerId, login },
    plans,
    m0,
    m1,
    domain,
  };
}
