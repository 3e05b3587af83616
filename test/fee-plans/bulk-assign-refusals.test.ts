/** POST /v1/fee-rules/bulk-assign and /all: the requests they refuse, with a problem document and nothing changed. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { like } from 'drizzle-orm';
import { auditEvents } from '../../src/db/schema.js';
import { type Injected, json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  assignmentSnapshot,
  bulkAssign,
  bulkAssignAll,
  appWithCatalogue,
  assertCreated,
  sorted,
} from '../helpers/plans.js';

const h = useTestApp();
const database = () => h.db.current.database;
const setup = () => appWithCatalogue(h);

/** A refused request answers a problem document and changes nothing, not even the audit trail. */
async function assertRefused(res: Injected, status: number, code: string, before: string[]) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = json(res);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.request_id, 'string');
  assert.deepEqual(await assignmentSnapshot(database()), before, 'merchant_payment_plans is unchanged');
  const audits = await database().db.select().from(auditEvents).where(like(auditEvents.action, 'fee_rules.%'));
  assert.equal(audits.length, 0, 'no audit record');
  return body;
}

describe('POST /v1/fee-rules/bulk-assign: errors', () => {
  for (const [name, body] of [
    ['missing', {}],
    ['empty', { merchant_ids: [] }],
  ] as const) {
    it(`answers 400 pointing to /all when merchant_ids is ${name}`, async () => {
      const { app, headers, plans } = await setup();
      const before = await assignmentSnapshot(database());
      const problem = await assertRefused(
        await bulkAssign(app, headers, { ...body, payment_plan_ids: [plans.visa6.id] }),
        400,
        'merchant_ids_required',
        before,
      );
      assert.match(problem.detail, /\/v1\/fee-rules\/bulk-assign\/all/);
      assert.equal(problem.errors[0].field, 'merchant_ids');
    });
  }

  const invalidBodies: Array<[string, (c: Awaited<ReturnType<typeof setup>>) => unknown, string]> = [
    ['no payment_plan_ids', (c) => ({ merchant_ids: [c.m0] }), 'payment_plan_ids'],
    ['empty payment_plan_ids', (c) => ({ merchant_ids: [c.m0], payment_plan_ids: [] }), 'payment_plan_ids'],
    [
      '201 payment_plan_ids',
      (c) => ({ merchant_ids: [c.m0], payment_plan_ids: Array.from({ length: 201 }, () => c.plans.visa6.id) }),
      'payment_plan_ids',
    ],
    [
      '10,001 merchant_ids',
      (c) => ({ merchant_ids: Array.from({ length: 10_001 }, () => c.m0), payment_plan_ids: [c.plans.visa6.id] }),
      'merchant_ids',
    ],
    [
      'a plan id that is not a UUID',
      (c) => ({ merchant_ids: [c.m0], payment_plan_ids: ['visa'] }),
      'payment_plan_ids[0]',
    ],
    [
      'a merchant id in urn:uuid form',
      (c) => ({ merchant_ids: [`urn:uuid:${c.m0}`], payment_plan_ids: [c.plans.visa6.id] }),
      'merchant_ids[0]',
    ],
    [
      'a lone string for merchant_ids',
      (c) => ({ merchant_ids: c.m0, payment_plan_ids: [c.plans.visa6.id] }),
      'merchant_ids',
    ],
    ['an unknown field', (c) => ({ merchant_ids: [c.m0], payment_plan_ids: [c.plans.visa6.id], all: true }), 'all'],
  ];
  for (const [name, bodyOf, field] of invalidBodies) {
    it(`answers 400 validation_failed for ${name}`, async () => {
      const c = await setup();
      const before = await assignmentSnapshot(database());
      const problem = await assertRefused(
        await bulkAssign(c.app, c.headers, bodyOf(c)),
        400,
        'validation_failed',
        before,
      );
      assert.equal(problem.errors[0].field, field);
    });
  }

  it('accepts exactly 200 plan ids and 10,000 merchant ids (duplicates included)', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await bulkAssign(app, headers, {
      merchant_ids: Array.from({ length: 10_000 }, () => m0),
      payment_plan_ids: Array.from({ length: 200 }, () => plans.visa6.id),
    });
    assertCreated(res);
  });

  it('answers 400 for malformed JSON and 415 for a body that is not JSON', async () => {
    const { app, headers } = await setup();
    const before = await assignmentSnapshot(database());
    const broken = await app.inject({
      method: 'POST',
      url: '/v1/fee-rules/bulk-assign',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"merchant_ids":',
    });
    await assertRefused(broken, 400, 'malformed_json', before);
    const text = await app.inject({
      method: 'POST',
      url: '/v1/fee-rules/bulk-assign',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: 'x',
    });
    await assertRefused(text, 415, 'unsupported_media_type', before);
  });

  it('answers 422 unknown_payment_plans listing unknown and foreign plans, in the order sent', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    const unknown = uuid('e');
    const res = await bulkAssign(app, headers, {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visa6.id, unknown, plans.foreign.id, unknown],
    });
    const problem = await assertRefused(res, 422, 'unknown_payment_plans', before);
    assert.deepEqual(problem.payment_plan_ids, [unknown, plans.foreign.id]);
    assert.equal(problem.instance, '/v1/fee-rules/bulk-assign');
  });

  it('answers 422 unknown_merchants listing unknown and foreign merchants', async () => {
    const { app, headers, plans, m0, o0 } = await setup();
    const before = await assignmentSnapshot(database());
    const unknown = uuid('d');
    const res = await bulkAssign(app, headers, { merchant_ids: [m0, o0, unknown], payment_plan_ids: [plans.visa6.id] });
    const problem = await assertRefused(res, 422, 'unknown_merchants', before);
    assert.deepEqual(problem.merchant_ids, [o0, unknown]);
  });

  it('answers 422 conflicting_payment_plans for two plans of the same kind and term', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    const res = await bulkAssign(app, headers, {
      merchant_ids: [m0],
      payment_plan_ids: [plans.visa1.id, plans.visa6.id, plans.visa1Own.id],
    });
    const problem = await assertRefused(res, 422, 'conflicting_payment_plans', before);
    assert.deepEqual(problem.conflicts, [{ payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] }]);
    assert.deepEqual(sorted(problem.payment_plan_ids), sorted([plans.visa1.id, plans.visa1Own.id]));
  });
});

describe('POST /v1/fee-rules/bulk-assign/all: errors', () => {
  it('answers 400 when merchant_ids is sent', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    const problem = await assertRefused(
      await bulkAssignAll(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      400,
      'validation_failed',
      before,
    );
    assert.equal(problem.errors[0].field, 'merchant_ids');
  });

  it('answers 400 without payment_plan_ids', async () => {
    const { app, headers } = await setup();
    const before = await assignmentSnapshot(database());
    await assertRefused(await bulkAssignAll(app, headers, {}), 400, 'validation_failed', before);
  });

  it('answers 422 for unknown and for conflicting plans', async () => {
    const { app, headers, plans } = await setup();
    const before = await assignmentSnapshot(database());
    const unknown = await assertRefused(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.foreign.id] }),
      422,
      'unknown_payment_plans',
      before,
    );
    assert.deepEqual(unknown.payment_plan_ids, [plans.foreign.id]);
    await assertRefused(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] }),
      422,
      'conflicting_payment_plans',
      before,
    );
  });
});

describe('POST /v1/fee-rules/bulk-assign, /all: security', () => {
  it('answers 401 without credentials or with an unknown token', async () => {
    const { app, plans, m0 } = await setup();
    const before = await assignmentSnapshot(database());
    for (const headers of [{}, { authorization: 'Bearer fga_unknown' }]) {
      const res = await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] });
      await assertRefused(res, 401, res.json().code, before);
      assert.ok(res.headers['www-authenticate']);
      await assertRefused(
        await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }),
        401,
        res.json().code,
        before,
      );
    }
  });

  it("cannot reach another customer's merchants, even with its own plans", async () => {
    const { app, headers, plans, o0 } = await setup();
    const before = await assignmentSnapshot(database());
    const problem = await assertRefused(
      await bulkAssign(app, headers, { merchant_ids: [o0], payment_plan_ids: [plans.visa6.id] }),
      422,
      'unknown_merchants',
      before,
    );
    assert.deepEqual(problem.merchant_ids, [o0]);
  });

  it('answers 403 to a merchant caller on both endpoints, before looking at the body', async () => {
    const { app, plans, m0, world } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const before = await assignmentSnapshot(database());
    const headers = apiKey(key.api_key);
    await assertRefused(
      await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      403,
      'forbidden',
      before,
    );
    await assertRefused(
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }),
      403,
      'forbidden',
      before,
    );
    await assertRefused(await bulkAssign(app, headers, { nonsense: true }), 403, 'forbidden', before);
  });
});
