/**
 * Test data written through the operator's import service (the same code path
 * the command line uses), with fixed, readable ids.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import type { KeySettings } from '../../src/features/api-keys/key-settings.js';
import type { ImportDocument } from '../../src/features/operator/import-schema.js';
import type { Harness } from './app.js';

let counter = 0;
/** A fresh UUID whose first block says what it is for. */
export function uuid(kind: 'c' | 'd' | 'e' | 'f' = 'f'): string {
  counter++;
  return `${kind}${String(counter).padStart(7, '0')}-0000-4000-8000-${String(Date.now() % 1e12).padStart(12, '0')}`;
}

export interface World {
  customerId: string;
  otherCustomerId: string;
  merchantIds: string[];
  otherMerchantIds: string[];
  login: { user: string; password: string };
  otherLogin: { user: string; password: string };
}

/** Two customers with two merchants each and one login user each. */
export async function seedWorld(app: FastifyInstance, extra: Partial<ImportDocument> = {}): Promise<World> {
  const customerId = uuid('c');
  const otherCustomerId = uuid('c');
  const merchantIds = [uuid('d'), uuid('d')];
  const otherMerchantIds = [uuid('d'), uuid('d')];
  const login = { user: 'owner@alpha.test', password: 'alpha-password-1' };
  const otherLogin = { user: 'owner@beta.test', password: 'beta-password-1' };
  await app.services.importer.importDocument({
    customers: [
      { id: customerId, name: 'Alpha' },
      { id: otherCustomerId, name: 'Beta' },
    ],
    merchants: [
      ...merchantIds.map((id, i) => ({ id, customer_id: customerId, name: `Alpha ${i}` })),
      ...otherMerchantIds.map((id, i) => ({ id, customer_id: otherCustomerId, name: `Beta ${i}` })),
    ],
    users: [
      { email: login.user, type: 'CUSTOMER', customer_id: customerId, password: login.password },
      { email: otherLogin.user, type: 'CUSTOMER', customer_id: otherCustomerId, password: otherLogin.password },
      ...(extra.users ?? []),
    ],
    payment_plans: extra.payment_plans ?? [],
    assignments: extra.assignments ?? [],
  });
  return { customerId, otherCustomerId, merchantIds, otherMerchantIds, login, otherLogin };
}

export async function loginAs(app: FastifyInstance, credentials: { user: string; password: string }) {
  const response = await app.inject({ method: 'POST', url: '/v1/login', payload: credentials });
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
  return response.json().token as { access_token: string; refresh_token: string; expires_in: number };
}

/** Issues a key through the operator path (no HTTP caller needed). */
export async function issueKey(
  app: FastifyInstance,
  owner: { user: string; customerId: string; merchantId?: string },
  settings: KeySettings = {},
) {
  const record = await app.services.apiKeys.issueByOperator(
    { email: owner.user, customerId: owner.customerId, merchantId: owner.merchantId ?? null },
    { requestId: null, actor: { type: 'operator', id: null } },
    settings,
  );
  return { id: record.id, api_key: record.api_key };
}

/** The usual start of a test: the app, two customers, and the first customer's access token. */
export async function customerSession(h: Harness, overrides: Partial<Config> = {}) {
  const app = await h.app(overrides);
  const world = await seedWorld(app);
  const token = (await loginAs(app, world.login)).access_token;
  return { app, world, token };
}
