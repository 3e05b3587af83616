/** Hostile query values on the listings are a 400 naming the parameter, never a 5xx (contract section 12). */
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
      assert.ok(response.json().errors.some((e: { field: string }) => e.field === field), `${url} names ${field}`);
    }
    assert.equal((await app.inject({ method: 'GET', url: '/v1/api-keys?page=2147483647', headers: bearer(token) })).statusCode, 200);
  });
});
