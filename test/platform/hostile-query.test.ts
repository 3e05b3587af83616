/** Hostile query values on the listings are a 400 naming the parameter, never a 5xx (docs/api.md#conventions). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';

describe('hostile query values on listings', () => {
  const h = useTestApp();

  it('refuses a page beyond 2147483647 or in exponent form, and NUL in a text filter, with a 400', async () => {
    const { app, token } = await customerSession(h);
    const cases: Array<[string, string]> = [
      ['/v1/api-keys?page=1e21', 'page'],
      ['/v1/api-keys?page=99999999999999999999', 'page'],
      ['/v1/api-keys?page=2147483648', 'page'],
      ['/v1/merchants?page=1e21', 'page'],
      ['/v1/audit-events?page=9007199254740993', 'page'],
      ['/v1/api-keys?username=a%00b', 'username'],
      ['/v1/audit-events?action=a%00b', 'action'],
    ];
    for (const [url, field] of cases) {
      const response = await app.inject({ method: 'GET', url, headers: bearer(token) });
      assert.equal(response.statusCode, 400, url);
      assert.equal(response.json().code, 'validation_failed', url);
      assert.ok(
        response.json().errors.some((e: { field: string }) => e.field === field),
        `${url} names ${field}`,
      );
    }
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/api-keys?page=2147483647', headers: bearer(token) })).statusCode,
      200,
    );
  });

  it('takes page and size in decimal digits only: hexadecimal, exponent, fraction, blank, Infinity and NaN are a 400', async () => {
    const { app, token } = await customerSession(h);
    for (const value of [
      '0x10',
      '1e1',
      '1.0',
      '1.5',
      '%205',
      '5%20',
      '',
      '%2B1',
      'Infinity',
      '-Infinity',
      'NaN',
      '0b1',
      '1_0',
    ]) {
      for (const [name, url] of [
        ['page', `/v1/merchants?page=${value}`],
        ['size', `/v1/audit-events?size=${value}`],
      ]) {
        const response = await app.inject({ method: 'GET', url: url!, headers: bearer(token) });
        assert.equal(response.statusCode, 400, url);
        const error = response.json().errors.find((e: { field: string }) => e.field === name);
        assert.equal(error?.message, 'must be an integer', url);
      }
    }
    const response = await app.inject({
      method: 'GET',
      url: '/v1/merchants?page=007&size=100',
      headers: bearer(token),
    });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json().page, { size: 100, total_elements: 2, total_pages: 1, number: 7 });
  });

  it('names the limit in words', async () => {
    const { app, token } = await customerSession(h);
    const cases: Array<[string, string, string]> = [
      ['/v1/merchants?size=0', 'size', 'must be at least 1'],
      ['/v1/api-keys?status=gone', 'status', 'must be ENABLED, DELETED or EXPIRED (any letter case)'],
      ['/v1/api-keys?merchant_id=42', 'merchant_id', 'must be a UUID'],
      ['/v1/api-keys?username=a%00b', 'username', 'must not contain U+0000 or an unpaired UTF-16 surrogate'],
      ['/v1/payment-plans?is_selected=maybe', 'is_selected', 'must be true or false'],
      ['/v1/merchants?nope=1', 'nope', 'is not an accepted field'],
    ];
    for (const [url, field, message] of cases) {
      const response = await app.inject({ method: 'GET', url, headers: bearer(token) });
      assert.equal(response.statusCode, 400, url);
      assert.deepEqual(response.json().errors, [{ field, message }], url);
      assert.equal(response.json().detail, 'The query parameters are not valid.');
    }
    // The name of an unknown parameter comes from the client: only its first 80 characters come back (clip()).
    const long = await app.inject({
      method: 'GET',
      url: `/v1/merchants?${'p'.repeat(5000)}=1`,
      headers: bearer(token),
    });
    assert.equal(long.statusCode, 400);
    assert.equal(long.json().errors[0].field, `${'p'.repeat(80)}...`);
  });
});
