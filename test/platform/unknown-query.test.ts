/**
 * Unknown query parameters are a 400 on every operation, POST and DELETE included
 * (docs/api.md#conventions): a misspelt `?dry_rn=true` must never apply a change.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, eq } from 'drizzle-orm';
import { apiKeys, auditEvents, authSessions } from '../../src/db/schema.js';
import { type Injected, json, useTestApp } from '../helpers/app.js';
import { uuid } from '../helpers/fixtures.js';
import { assignmentSnapshot, bulkAssign, bulkAssignAll, seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();

function assertUnknownParameter(res: Injected, name: string, where: string) {
  assert.equal(res.statusCode, 400, `${where}: ${res.body}`);
  assert.equal(json(res).code, 'validation_failed', where);
  assert.deepEqual(json(res).errors, [{ field: name, message: 'is not an accepted field' }], where);
}

async function counts() {
  const { db } = h.db.current.database;
  const [audits] = await db.select({ n: count() }).from(auditEvents);
  const [keys] = await db.select({ n: count() }).from(apiKeys);
  const [sessions] = await db.select({ n: count() }).from(authSessions);
  return {
    assignments: await assignmentSnapshot(h.db.current.database),
    audits: audits!.n,
    keys: keys!.n,
    sessions: sessions!.n,
  };
}

type Parameter = { in: string; name: string; required?: boolean; example?: unknown };

describe('unknown query parameters', () => {
  it('are a 400 on a bulk assignment and change nothing (a misspelt dry_run)', async () => {
    const app = await h.app();
    const { headers, plans, m0 } = await seedCatalogue(app);
    const before = await counts();
    const body = { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] };
    assertUnknownParameter(await bulkAssign(app, headers, body, '?dry_rn=true'), 'dry_rn', 'bulk-assign');
    assertUnknownParameter(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }, '?dryrun=true'),
      'dryrun',
      'bulk-assign/all',
    );
    assertUnknownParameter(
      await bulkAssign(app, headers, body, '?dry_run=true&x=1'),
      'x',
      'bulk-assign with a known one too',
    );
    assert.deepEqual(await counts(), before);
  });

  it('are a 400 on creating and deleting an API key, and on logging in, and change nothing', async () => {
    const app = await h.app();
    const { headers, world } = await seedCatalogue(app);
    const created = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers,
      payload: { user: 'a@alpha.test', customer_id: world.customerId },
    });
    assert.equal(created.statusCode, 201, created.body);
    const keyId = json(created).id as string;
    const before = await counts();
    const create = await app.inject({
      method: 'POST',
      url: '/v1/api-keys?merchant=1',
      headers,
      payload: { user: 'b@alpha.test', customer_id: world.customerId },
    });
    assertUnknownParameter(create, 'merchant', 'POST /v1/api-keys');
    assertUnknownParameter(
      await app.inject({ method: 'DELETE', url: `/v1/api-keys/${keyId}?force=true`, headers }),
      'force',
      'DELETE /v1/api-keys/{id}',
    );
    assertUnknownParameter(
      await app.inject({ method: 'POST', url: '/v1/login?remember=1', payload: world.login }),
      'remember',
      'POST /v1/login',
    );
    assert.deepEqual(await counts(), before);
    const [key] = await h.db.current.database.db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
    assert.equal(key!.status, 'ENABLED');
  });

  it('are a 400 on every operation of the document that takes no body', async () => {
    const app = await h.app();
    const { headers } = await seedCatalogue(app);
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    let checked = 0;
    for (const [path, methods] of Object.entries(
      doc.paths as Record<
        string,
        Record<string, { requestBody?: unknown; parameters?: Parameter[]; responses: Record<string, unknown> }>
      >,
    )) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method} ${path}`;
        assert.ok(op.responses['400'], `${where} documents 400`);
        if (op.requestBody) continue;
        // Required parameters take their documented example, so the unknown one is the only fault.
        const required = (op.parameters ?? [])
          .filter((p) => p.in === 'query' && p.required)
          .map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`);
        const query = [...required, 'unknown_parameter=1'].join('&');
        const url = `${path.replace(/\{[^}]+\}/g, uuid('f'))}?${query}`;
        assertUnknownParameter(
          await app.inject({ method: method.toUpperCase() as 'GET', url, headers }),
          'unknown_parameter',
          where,
        );
        checked++;
      }
    }
    assert.ok(checked >= 8, `checked ${checked} operations`);
  });
});
