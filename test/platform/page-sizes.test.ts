/** Listing page sizes as the platform's clients ask them: size=10000 served as the listing's maximum, a size below 1 refused. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paymentPlans } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey, seedWorld } from '../helpers/fixtures.js';
import { fillPath, openapiDocument, operations, queryString, type Schema } from '../helpers/openapi.js';

const h = useTestApp();

describe('page sizes', () => {
  it('serves size=10000 as 1000 on every listing of the document (merchants: 100000 as 10000), and refuses a size below 1', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const { api_key } = await issueKey(app, { user: 'lister@alpha.test', customerId: world.customerId });
    // A listing under a subscription (its deliveries) needs one; creation resolves no host name.
    const subscription = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { 'x-api-key': api_key },
      payload: {
        notification_url: 'https://hooks.example.com/feegate',
        notification_type: ['API_KEY_REVOKED'],
        secret_key: 'Whsec-Alpha-2026',
      },
    });
    assert.equal(subscription.statusCode, 201, subscription.body);
    const doc = await openapiDocument(app);
    const listings = operations(doc).filter((op) => op.parameters.some((p) => p.in === 'query' && p.name === 'size'));
    assert.ok(listings.length >= 4, `${listings.length} listings`);
    for (const op of listings) {
      // The merchant listing's maximum is the platform's (contract section 20).
      const max = /^\/v[12]\/merchants$/.test(op.path) ? 10000 : 1000;
      const size = op.parameters.find((p) => p.name === 'size')!.schema;
      assert.deepEqual(
        [size.type, size.minimum, size.maximum, size['x-clamp-maximum']],
        ['integer', 1, undefined, max],
        `${op.path} states size`,
      );
      assert.match(
        doc.paths[op.path].get.parameters.find((p: Schema) => p.name === 'size').description,
        new RegExp(`above ${max} .* served as ${max}`),
      );
      const required = Object.fromEntries(
        op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, p.example]),
      );
      const url = (value: string) =>
        fillPath(op.path, { id: json(subscription).id }) + queryString({ ...required, size: value });
      for (const [ask, served] of [
        [`${max * 10}`, max],
        [`${max + 1}`, max],
        [`${max}`, max],
        ['1', 1],
      ] as const) {
        const res = await app.inject({ url: url(ask), headers: { 'x-api-key': api_key } });
        assert.equal(res.statusCode, 200, `${op.path} size=${ask}: ${res.body}`);
        // GET /v1/users answers in the platform's shape: its page descriptor is `metadata`.
        const body = json(res);
        assert.equal((body.page ?? body.metadata).size, served, `${op.path} size=${ask}`);
      }
      for (const bad of ['0', '-1', '1e4', '10000.0']) {
        const res = await app.inject({ url: url(bad), headers: { 'x-api-key': api_key } });
        assert.equal(res.statusCode, 400, `${op.path} size=${bad}`);
        assert.deepEqual(
          json(res).errors.map((e: { field: string }) => e.field),
          ['size'],
        );
      }
    }
  });

  it('serves 1,000 of 1,005 payment plans for size=10000, and the other 5 on the next page', async () => {
    const { app, world, token } = await customerSession(h);
    await h.db.current.database.db.insert(paymentPlans).values(
      Array.from({ length: 1005 }, (_, i) => ({
        customerId: world.customerId,
        paymentMethod: 'CREDIT',
        cardBrand: 'VISA',
        term: i + 1,
        commission: '1.0000',
        isInternational: false,
        hasInstallments: true,
      })),
    );
    const first = json(await app.inject({ url: '/api/v1/payment-plans?size=10000', headers: bearer(token) }));
    assert.equal(first.page.size, 1000);
    assert.equal(first.data.length, 1000);
    const total = first.page.total_elements;
    assert.ok(total > 1000 && total <= 2000, `${total} plans: two pages`);
    const second = json(await app.inject({ url: '/v1/payment-plans?size=10000&page=1', headers: bearer(token) }));
    assert.deepEqual(second.page, { size: 1000, total_elements: total, total_pages: 2, number: 1 });
    const all = new Set([...first.data, ...second.data].map((m: { id: string }) => m.id));
    assert.equal(all.size, total, 'every plan once');
  });
});
