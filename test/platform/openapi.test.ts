import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import packageJson from '../../package.json' with { type: 'json' };
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
      'delete /v1/api-keys/{id}': ['204', '400', '401', '403', '404', '429', '500', '503'],
      'patch /v1/api-keys/{id}': ['200', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503'],
      'post /v1/api-keys/{id}/roll': ['201', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503'],
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
        if (op.requestBody)
          for (const s of ['400', '413', '415']) assert.ok(op.responses[s], `${where} documents ${s}`);
        if (op.security?.length)
          for (const s of ['401', '500', '503']) assert.ok(op.responses[s], `${where} documents ${s}`);
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) >= 400) {
            const content = (response as { content?: Record<string, unknown> }).content ?? {};
            assert.ok(content['application/problem+json'], `${where} ${status} is problem+json`);
          }
        }
      }
    }
  });

  it('documents the key lifecycle: operation ids, error codes, and the rate-limit headers of a 429', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const patch = doc.paths['/v1/api-keys/{id}'].patch;
    const roll = doc.paths['/v1/api-keys/{id}/roll'].post;
    assert.equal(patch.operationId, 'updateApiKey');
    assert.equal(roll.operationId, 'rollApiKey');
    for (const op of [patch, roll]) {
      assert.ok(op.summary && op.tags.includes('api-keys'));
      for (const code of ['api_key_not_enabled', 'api_key_not_found', 'read_only_key', 'rate_limited'])
        assert.match(op.description, new RegExp(code));
      assert.deepEqual(Object.keys(op.responses['429'].headers).sort(), [
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'Retry-After',
      ]);
    }
    const created = doc.components.schemas.CreateApiKeyRequest.properties;
    assert.deepEqual(created.rate_limit.properties.limit, {
      type: 'integer',
      minimum: 1,
      maximum: 100000,
      description: 'Requests allowed per window',
    });
    assert.equal(doc.components.schemas.RollApiKeyRequest.properties.grace_period_seconds.maximum, 604800);
    assert.ok(doc.paths['/v1/login'].post.responses['429'].headers['Retry-After']);
  });

  it('is a product: operationIds, tags, servers, license, version, named schemas, examples, codes per error', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    assert.equal(doc.info.version, packageJson.version);
    assert.equal(doc.info.license.name, 'Apache-2.0');
    assert.ok(doc.servers.length > 0);
    const tags = new Set(
      (doc.tags as Array<{ name: string; description: string }>).map((t) => t.description && t.name),
    );
    const operationIds = new Set<string>();
    const hasExample = (media: Record<string, unknown>) => media.example !== undefined || media.examples !== undefined;
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method} ${path}`;
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${where} has a camelCase operationId`);
        assert.ok(!operationIds.has(op.operationId), `${where}: operationId is unique`);
        operationIds.add(op.operationId);
        assert.ok(op.summary && op.description, `${where} has a summary and a description`);
        assert.ok(
          op.tags.every((t: string) => tags.has(t)),
          `${where}: its tags are declared with a description`,
        );
        assert.ok(Array.isArray(op.security), `${where} says its security ([] when public)`);
        for (const p of op.parameters ?? []) {
          if (p.schema?.default !== undefined)
            assert.equal(p.required, false, `${where}: ${p.name} has a default, so it is optional`);
        }
        for (const media of Object.values(op.requestBody?.content ?? {}) as Array<Record<string, any>>) {
          assert.match(media.schema.$ref ?? '', /^#\/components\/schemas\//, `${where}: the body is a named schema`);
          assert.ok(hasExample(media), `${where}: the body has an example`);
        }
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          for (const media of Object.values(response.content ?? {}) as Array<Record<string, any>>) {
            assert.ok(hasExample(media), `${where} ${status} has an example`);
            if (Number(status) >= 400) {
              const codes: string[] = media.schema.allOf[1].properties.code.enum;
              assert.ok(codes.length > 0, `${where} ${status} lists its codes`);
              assert.deepEqual(
                Object.keys(media.examples).sort(),
                [...codes].sort(),
                `${where} ${status}: one example per code`,
              );
            } else {
              assert.match(
                media.schema.$ref ?? '',
                /^#\/components\/schemas\//,
                `${where} ${status} is a named schema`,
              );
            }
          }
        }
      }
    }
    const problem = doc.components.schemas.Problem.properties;
    for (const field of ['code', 'errors', 'conflicts', 'payment_plan_ids', 'merchant_ids'])
      assert.ok(problem[field], `Problem has ${field}`);
  });

  it('lists the exact codes of an operation: bulk-assign answers 422 with its four codes', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const media = doc.paths['/v1/fee-rules/bulk-assign'].post.responses['422'].content['application/problem+json'];
    assert.deepEqual(media.schema.allOf[1].properties.code.enum, [
      'inactive_merchants',
      'unknown_payment_plans',
      'unknown_merchants',
      'retired_payment_plans',
      'conflicting_payment_plans',
      // Every POST and PATCH of a caller (src/plugins/openapi-idempotency.ts).
      'idempotency_key_reused',
    ]);
    assert.deepEqual(media.examples.conflicting_payment_plans.value.conflicts[0].payment_plan_ids.length, 2);
    const login = doc.paths['/v1/login'].post;
    assert.deepEqual(login.security, [], 'login is public');
    assert.deepEqual(login.responses['401'].content['application/problem+json'].schema.allOf[1].properties.code.enum, [
      'invalid_credentials',
    ]);
  });

  it('serves /docs as a page', async () => {
    const app = await h.app();
    const res = await app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
  });
});
