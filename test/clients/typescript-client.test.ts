/** The generated TypeScript client drives the real app over real HTTP. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { createFeegateClient, MAX_PAGE_SIZE } from '../../clients/typescript/index.js';
import { MAX_PAGE_SIZE as SERVED_MAXIMUM } from '../../src/schemas/common.js';
import { useTestApp } from '../helpers/app.js';
import { seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();

async function listening(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

describe('clients/typescript', () => {
  // At the root and under the platform's base path, the document's second server.
  for (const basePath of ['', '/api']) {
    it(`logs in, refreshes, creates, lists and deletes a key, and bulk-assigns, through the typed client at ${basePath || 'the root'}`, async () => {
      const app = await h.app();
      const { world, plans } = await seedCatalogue(app);
      const baseUrl = (await listening(app)) + basePath;

      const anonymous = createFeegateClient(baseUrl);
      const login = await anonymous.POST('/v1/login', {
        body: { user: world.login.user, password: world.login.password },
      });
      assert.equal(login.response.status, 200, JSON.stringify(login.error));
      const first = login.data!.token!;
      assert.equal(decodeJwt(first.access_token).exp, decodeJwt(first.access_token).iat! + first.expires_in);

      const refreshed = await anonymous.POST('/v1/login/refresh', { body: { refresh_token: first.refresh_token } });
      assert.equal(refreshed.response.status, 200);
      let accessToken = refreshed.data!.token.access_token;

      // The token is asked for before every request: a renewed one is picked up.
      const feegate = createFeegateClient(baseUrl, { accessToken: () => accessToken });
      const me = await feegate.GET('/v1/users/me');
      assert.equal(me.data?.customer_id, world.customerId);
      assert.equal(me.data?.auth, 'token');

      const created = await feegate.POST('/v1/api-keys', {
        body: { user: 'integration@alpha.test', customer_id: world.customerId },
      });
      assert.equal(created.response.status, 201, JSON.stringify(created.error));
      const key = created.data!;
      assert.match(key.api_key, /^fgk_/);

      // Defaulted query parameters are optional: no page, size or status sent.
      const listed = await feegate.GET('/v1/api-keys');
      assert.equal(listed.response.status, 200);
      assert.deepEqual(
        listed.data!.data.map((k) => k.id),
        [key.id],
      );
      assert.equal(listed.data!.page.number, 0);

      // The new key works through the same client.
      const withKey = createFeegateClient(baseUrl, { apiKey: key.api_key });
      assert.equal((await withKey.GET('/v1/users/me')).data?.auth, 'api_key');

      const assigned = await feegate.POST('/v1/fee-rules/bulk-assign', {
        body: { merchant_ids: [world.merchantIds[0]!], payment_plan_ids: [plans.visa6.id] },
      });
      assert.equal(assigned.response.status, 201, JSON.stringify(assigned.error));
      const unknown = await feegate.POST('/v1/fee-rules/bulk-assign', {
        body: { merchant_ids: [world.merchantIds[0]!], payment_plan_ids: [plans.foreign.id] },
      });
      assert.equal(unknown.response.status, 422);
      assert.equal(unknown.error?.code, 'unknown_payment_plans');
      assert.deepEqual(unknown.error?.payment_plan_ids, [plans.foreign.id]);

      const deleted = await feegate.DELETE('/v1/api-keys/{id}', { params: { path: { id: key.id } } });
      assert.equal(deleted.response.status, 204);
      const problem = await withKey.GET('/v1/users/me');
      assert.equal(problem.response.status, 401);
      assert.equal(problem.error?.code, 'invalid_api_key');

      const out = await feegate.POST('/v1/logout');
      assert.equal(out.response.status, 204);
      assert.equal((await feegate.GET('/v1/users/me')).error?.code, 'invalid_token');
      accessToken = '';
      assert.equal((await feegate.GET('/v1/users/me')).error?.code, 'missing_credentials');
    });
  }

  it("states the server's largest page as MAX_PAGE_SIZE, and a page of it is served", async () => {
    assert.equal(MAX_PAGE_SIZE, SERVED_MAXIMUM);
    const app = await h.app();
    const { world } = await seedCatalogue(app);
    const baseUrl = await listening(app);
    const { access_token } = (await createFeegateClient(baseUrl).POST('/v1/login', { body: world.login })).data!.token!;
    const feegate = createFeegateClient(baseUrl, { accessToken: access_token });
    const listed = await feegate.GET('/v1/payment-plans', { params: { query: { size: MAX_PAGE_SIZE * 10 } } });
    assert.equal(listed.data?.page.size, MAX_PAGE_SIZE);
  });
});
