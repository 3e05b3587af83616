/** Helpers for four-eyes approval tests: the policy, the change request routes, and a second ADMIN. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { bearer, json } from './app.js';
import type { Credentials } from './plans.js';
import { seedCatalogue } from './plans.js';
import { userWithRole } from './users.js';

export function setPolicy(app: FastifyInstance, headers: Credentials, feeChanges: 'NONE' | 'REQUIRED') {
  return app.inject({
    method: 'PATCH',
    url: '/v1/customers/me',
    headers,
    payload: { approval_policy: { fee_changes: feeChanges } },
  });
}

export const getRequest = (app: FastifyInstance, headers: Credentials, id: string) =>
  app.inject({ method: 'GET', url: `/v1/change-requests/${id}`, headers });

export const listRequests = (app: FastifyInstance, headers: Credentials, query = '') =>
  app.inject({ method: 'GET', url: `/v1/change-requests${query}`, headers });

export const approve = (app: FastifyInstance, headers: Credentials, id: string, body: object = {}) =>
  app.inject({ method: 'POST', url: `/v1/change-requests/${id}/approve`, headers, payload: body });

export const reject = (app: FastifyInstance, headers: Credentials, id: string, body: object) =>
  app.inject({ method: 'POST', url: `/v1/change-requests/${id}/reject`, headers, payload: body });

export const cancelRequest = (app: FastifyInstance, headers: Credentials, id: string) =>
  app.inject({ method: 'POST', url: `/v1/change-requests/${id}/cancel`, headers });

/** The fee catalogue of seedCatalogue, its customer under the REQUIRED policy, and a second ADMIN (`checker`). */
export async function underApproval(app: FastifyInstance) {
  const catalogue = await seedCatalogue(app);
  const token = (catalogue.headers as { authorization: string }).authorization.slice('Bearer '.length);
  const checker = await userWithRole(app, token, 'checker@alpha.test', 'ADMIN');
  const set = await setPolicy(app, catalogue.headers, 'REQUIRED');
  assert.equal(set.statusCode, 200, set.body);
  return { ...catalogue, maker: catalogue.headers, checker: bearer(checker.token), checkerId: checker.id, token };
}

/** The change request of a 202 answer, checked to name it in Location. */
export function heldRequest(res: Awaited<ReturnType<FastifyInstance['inject']>>) {
  assert.equal(res.statusCode, 202, res.body);
  const { change_request } = json(res);
  assert.equal(res.headers.location, `/v1/change-requests/${change_request.id}`);
  return change_request as Record<string, any>;
}
