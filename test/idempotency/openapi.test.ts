/** The OpenAPI document declares Idempotency-Key on every POST and PATCH, with the codes it brings (contract section 21). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';

const h = useTestApp();

type Json = Record<string, any>;

const codesAt = (operation: Json, status: string): string[] =>
  operation.responses[status]?.content?.['application/problem+json']?.schema?.allOf?.[1]?.properties?.code?.enum ?? [];

describe('Idempotency-Key in the OpenAPI document', () => {
  it('is a header of every POST and PATCH, with 400, 409 and 422 where there is a caller, and of no other method', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as Json;
    let changes = 0;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        const header = (operation.parameters ?? []).find(
          (p: Json) => p.in === 'header' && p.name === 'Idempotency-Key',
        );
        if (method !== 'post' && method !== 'patch') {
          assert.equal(header, undefined, where);
          continue;
        }
        changes++;
        assert.ok(header, `${where} declares Idempotency-Key`);
        assert.equal(header.schema.maxLength, 255, where);
        assert.ok(codesAt(operation, '400').includes('invalid_idempotency_key'), where);
        if (operation.security.length === 0) continue;
        assert.ok(codesAt(operation, '409').includes('idempotency_key_in_use'), where);
        assert.ok(operation.responses['409'].headers['Retry-After'], `${where}: 409 has Retry-After`);
        assert.ok(codesAt(operation, '422').includes('idempotency_key_reused'), where);
        const success = Object.keys(operation.responses).filter((s) => s.startsWith('2'));
        for (const status of success)
          assert.ok(operation.responses[status].headers['Idempotent-Replayed'], `${where} ${status}`);
      }
    }
    assert.ok(changes >= 25, `found ${changes} POST and PATCH operations`);
  });
});
