/**
 * What the OpenAPI document states where a schema can (contract section 20):
 * `commission` is a multiple of 0.0001 and `notification_url` a URI, and the
 * server holds to both.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { openapiDocument } from '../helpers/openapi.js';

const h = useTestApp();

describe('the document states multipleOf and format: uri', () => {
  it('states them on every commission and notification_url', async () => {
    const app = await h.app();
    const schemas = (await openapiDocument(app)).components.schemas;
    assert.equal(schemas.NewFeeRuleRequest.properties.commission.multipleOf, 0.0001);
    assert.equal(schemas.PaymentPlan.properties.commission.multipleOf, 0.0001);
    const urls = Object.values(schemas)
      .map((s: any) => s.properties?.notification_url)
      .filter(Boolean);
    assert.ok(urls.length >= 3, `${urls.length} schemas with notification_url`);
    for (const url of urls) assert.equal(url.format, 'uri');
  });

  it('accepts commissions of up to 4 decimals, to the maximum, and refuses a fifth: 400 naming commission', async () => {
    const { app, token } = await customerSession(h);
    const plan = (commission: number, term: number) =>
      app.inject({
        method: 'POST',
        url: '/v1/fee-rules',
        headers: bearer(token),
        payload: {
          payment_method: 'CREDIT',
          card_brand: 'STATED',
          term,
          commission,
          has_installments: true,
          is_international: false,
        },
      });
    for (const [i, ok] of [2.49, 0.0001, 1.2345, 99_999_999.9999].entries()) {
      const res = await plan(ok, 100 + i);
      assert.equal(res.statusCode, 201, `${ok}: ${res.body}`);
      assert.equal(json(res).commission, ok);
    }
    for (const [i, bad] of [0.00015, 2.49001, 1e-7].entries()) {
      const res = await plan(bad, 200 + i);
      assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
      assert.deepEqual(
        json(res).errors.map((e: { field: string }) => e.field),
        ['commission'],
      );
    }
  });

  it('refuses a notification_url that is no URI: 400 naming it', async () => {
    const { app, token } = await customerSession(h);
    for (const url of ['hooks.example.com/feegate', 'https://exa mple.com/x', '']) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: bearer(token),
        payload: { notification_url: url, notification_type: ['API_KEY_REVOKED'], secret_key: 'Whsec-Alpha-2026' },
      });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.ok(
        json(res).errors.some((e: { field: string }) => e.field === 'notification_url'),
        res.body,
      );
    }
  });
});
