import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { useTestApp } from '../helpers/app.js';

const h = useTestApp();

type Operation = { requestBody?: unknown; security?: unknown[]; responses: Record<string, unknown> };

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const app = await h.app();
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc));
  });

  it('documents every operation of the contract with the statuses it can return', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const expected: Record<string, string[]> = {
      'post /v1/login': ['200', '400', '401', '413', '415', '429', '500', '503'],
      'post /v1/login/refresh': ['200', '400', '401', '413', '415', '500', '503'],
      'post /v1/logout': ['204', '400', '401', '403', '500', '503'],
      'get /v1/users/me': ['200', '400', '401', '500', '503'],
      'post /v1/api-keys': ['201', '400', '401', '403', '404', '409', '413', '415', '500', '503'],
      'get /v1/api-keys': ['200', '400', '401', '404', '500', '503'],
      'delete /v1/api-keys/{id}': ['204', '400', '401', '404', '500', '503'],
      'get /ready': ['200', '503'],
      'get /health': ['200'],
    };
    for (const [operation, statuses] of Object.entries(expected)) {
      const [method, path] = operation.split(' ') as [string, string];
      const op = doc.paths[path]?.[method] as Operation | undefined;
      assert.ok(op, `${operation} is documented`);
      for (const status of statuses) assert.ok(op.responses[status], `${operation} documents ${status}`);
    }
    // Generic rules for every operation, including those added later.
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method} ${path}`;
        if (op.requestBody) for (const s of ['400', '413', '415']) assert.ok(op.responses[s], `${where} documents ${s}`);
        if (op.security) for (const s of ['401', '500', '503']) assert.ok(op.responses[s], `${where} documents ${s}`);
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) >= 400) {
            const content = (response as { content?: Record<string, unknown> }).content ?? {};
            assert.ok(content['application/problem+json'], `${where} ${status} is problem+json`);
          }
        }
      }
    }
  });

  it('serves /docs as a page', async () => {
    const app = await h.app();
    const res = await app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
  });
});
