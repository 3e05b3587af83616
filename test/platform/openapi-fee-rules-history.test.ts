/** The operations of docs/fee-rules-history.md are documented like every other: id, summary, codes, tags, security, statuses. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';

const h = useTestApp();

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<string, unknown>;
};

describe('OpenAPI: fee rules over time', () => {
  it('documents the new operations and the dry run', async () => {
    const app = await h.app();
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const expected: Record<string, { id: string; statuses: string[]; codes: string[] }> = {
      'get /v1/merchants/{id}/fee-rules': {
        id: 'getMerchantFeeRules',
        // 403: a merchant key whose merchant is INACTIVE (merchant_inactive), as on every authenticated operation.
        statuses: ['200', '400', '401', '403', '404', '429', '500', '503'],
        codes: ['validation_failed', 'merchant_not_found'],
      },
      'get /v1/audit-events': {
        id: 'listAuditEvents',
        statuses: ['200', '400', '401', '403', '429', '500', '503'],
        codes: ['validation_failed', 'invalid_time_range', 'forbidden'],
      },
      // 409: idempotency_key_in_use, as on every POST and PATCH of a caller (src/plugins/openapi-idempotency.ts).
      'post /v1/fee-rules/bulk-assign': {
        id: 'bulkAssignFeeRules',
        statuses: ['200', '201', '202', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '503'],
        codes: ['dry_run', 'validation_failed'],
      },
      'post /v1/fee-rules/bulk-assign/all': {
        id: 'bulkAssignFeeRulesToAll',
        statuses: ['200', '201', '202', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '503'],
        codes: ['dry_run', 'validation_failed', 'effective_at'],
      },
      'post /v1/merchants/{id}/fee-rules': {
        id: 'assignMerchantFeeRules',
        statuses: ['200', '201', '202', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '503'],
        codes: ['dry_run', 'merchant_not_found', 'retired_payment_plans', 'effective_at'],
      },
    };
    for (const [operation, want] of Object.entries(expected)) {
      const [method, path] = operation.split(' ') as [string, string];
      const op = doc.paths[path]?.[method] as Operation | undefined;
      assert.ok(op, `${operation} is documented`);
      assert.equal(op.operationId, want.id);
      assert.ok(op.summary && op.tags?.length && op.security?.length, `${operation} has a summary, tags and security`);
      for (const code of want.codes) assert.match(op.description ?? '', new RegExp(code), `${operation} names ${code}`);
      assert.deepEqual(Object.keys(op.responses).sort(), [...want.statuses].sort(), `${operation} statuses`);
    }
    const dryRun = doc.paths['/v1/fee-rules/bulk-assign'].post.parameters.find(
      (p: { name: string }) => p.name === 'dry_run',
    );
    assert.equal(dryRun?.in, 'query');
  });
});
