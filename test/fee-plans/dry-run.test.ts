/**
 * POST /v1/fee-rules/bulk-assign[/all]?dry_run=true: what the assignment would
 * change, with the same checks and errors, and nothing written
 * (docs/fee-rules-history.md).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { auditEvents, merchantPaymentPlanHistory } from '../../src/db/schema.js';
import { type Injected, json, useTestApp } from '../helpers/app.js';
import { issueKey, uuid } from '../helpers/fixtures.js';
import {
  apiKey,
  assignmentSnapshot,
  bulkAssign,
  bulkAssignAll,
  plansByMerchant,
  seedCatalogue,
} from '../helpers/plans.js';

const h = useTestApp();
const database = () => h.db.current.database;
const DRY = '?dry_run=true';

async function setup() {
  const app = await h.app();
  return { app, ...(await seedCatalogue(app)) };
}

/** Assignments, history rows and audit records: everything a change writes. */
async function everything(): Promise<unknown> {
  const { db } = database();
  const [audits] = await db.select({ n: count() }).from(auditEvents);
  const [history] = await db.select({ n: count() }).from(merchantPaymentPlanHistory);
  return { assignments: await assignmentSnapshot(database()), audits: audits!.n, history: history!.n };
}

/** The effect of a real call, as a dry run reports it: the change of every merchant's plans. */
function effectOf(before: Map<string, string[]>, after: Map<string, string[]>, merchants: number) {
  const ids = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes = ids.flatMap((merchant_id) => {
    const was = before.get(merchant_id) ?? [];
    const is = after.get(merchant_id) ?? [];
    const added = is.filter((id) => !was.includes(id)).sort();
    const removed = was.filter((id) => !is.includes(id)).sort();
    return added.length || removed.length ? [{ merchant_id, added, removed }] : [];
  });
  return {
    dry_run: true,
    merchants,
    merchants_changed: changes.length,
    assignments_added: changes.reduce((n, c) => n + c.added.length, 0),
    assignments_removed: changes.reduce((n, c) => n + c.removed.length, 0),
    changes,
  };
}

async function assertRefusedAlike(dry: Injected, real: Injected, status: number, code: string, before: unknown) {
  for (const res of [dry, real]) {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(json(res).code, code);
  }
  const { request_id: _a, ...dryProblem } = json(dry);
  const { request_id: _b, ...realProblem } = json(real);
  assert.deepEqual(dryProblem, realProblem, 'the same problem document');
  assert.deepEqual(await everything(), before, 'nothing written');
}

describe('bulk assignment dry run: happy', () => {
  it('announces exactly what the real call then does, and writes nothing', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    const body = {
      merchant_ids: [m0, m1, m0],
      payment_plan_ids: [plans.visa1Own.id, plans.visa6.id, plans.visaDebit.id],
    };
    const before = await everything();
    const beforePlans = await plansByMerchant(database());
    const dry = await bulkAssign(app, headers, body, DRY);
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(await everything(), before, 'nothing written, no audit record');
    assert.equal((await bulkAssign(app, headers, body)).statusCode, 201);
    assert.deepEqual(json(dry), effectOf(beforePlans, await plansByMerchant(database()), 2));
    // m0 held visa1, visa3 (replaced) and visaDebit (kept); m1 held visa1 (replaced).
    assert.deepEqual(json(dry).assignments_removed, 3);
  });

  it('does the same for every merchant with /all, and other customers are not counted', async () => {
    const { app, headers, plans, world } = await setup();
    const fresh = uuid('d');
    await app.services.importer.importDocument({
      merchants: [{ id: fresh, customer_id: world.customerId, name: 'No plans yet' }],
    });
    const body = { payment_plan_ids: [plans.visa1Own.id, plans.master1.id] };
    const beforePlans = await plansByMerchant(database());
    const dry = await bulkAssignAll(app, headers, body, DRY);
    assert.equal(dry.statusCode, 200, dry.body);
    assert.equal((await bulkAssignAll(app, headers, body)).statusCode, 201);
    assert.deepEqual(json(dry), effectOf(beforePlans, await plansByMerchant(database()), 3));
  });

  it('reports no change when the merchants already hold the plans', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await bulkAssign(
      app,
      headers,
      { merchant_ids: [m0], payment_plan_ids: [plans.visa1.id, plans.visaDebit.id] },
      DRY,
    );
    assert.deepEqual(json(res), {
      dry_run: true,
      merchants: 1,
      merchants_changed: 0,
      assignments_added: 0,
      assignments_removed: 0,
      changes: [],
    });
  });

  it('lists the first 100 changed merchants by id while the counts cover all', async () => {
    const { app, headers, plans, world } = await setup();
    const many = Array.from({ length: 120 }, () => uuid('d'));
    await app.services.importer.importDocument({
      merchants: many.map((id, i) => ({ id, customer_id: world.customerId, name: `Shop ${i}` })),
    });
    const res = await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }, DRY);
    const body = json(res);
    assert.equal(body.merchants, 122);
    assert.equal(body.merchants_changed, 122);
    assert.equal(body.assignments_added, 122);
    assert.equal(body.changes.length, 100);
    const all = [...many, ...world.merchantIds].sort();
    assert.deepEqual(
      body.changes.map((c: { merchant_id: string }) => c.merchant_id),
      all.slice(0, 100),
    );
  });

  it('answers dry_run=false with the real call', async () => {
    const { app, headers, plans, m0 } = await setup();
    const res = await bulkAssign(
      app,
      headers,
      { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] },
      '?dry_run=false',
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.ok((await plansByMerchant(database())).get(m0)!.includes(plans.visa6.id));
  });
});

describe('bulk assignment dry run: errors are those of the real call', () => {
  it('answers 400 merchant_ids_required', async () => {
    const { app, headers, plans } = await setup();
    const body = { merchant_ids: [], payment_plan_ids: [plans.visa6.id] };
    await assertRefusedAlike(
      await bulkAssign(app, headers, body, DRY),
      await bulkAssign(app, headers, body),
      400,
      'merchant_ids_required',
      await everything(),
    );
  });

  it('answers 422 for unknown plans, unknown merchants and conflicting plans', async () => {
    const { app, headers, plans, m0, o0 } = await setup();
    const before = await everything();
    const cases: Array<[object, string]> = [
      [{ merchant_ids: [m0], payment_plan_ids: [plans.foreign.id, uuid('e')] }, 'unknown_payment_plans'],
      [{ merchant_ids: [m0, o0], payment_plan_ids: [plans.visa6.id] }, 'unknown_merchants'],
      [{ merchant_ids: [m0], payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] }, 'conflicting_payment_plans'],
    ];
    for (const [body, code] of cases) {
      await assertRefusedAlike(
        await bulkAssign(app, headers, body, DRY),
        await bulkAssign(app, headers, body),
        422,
        code,
        before,
      );
    }
    const all = { payment_plan_ids: [plans.visa1.id, plans.visa1Own.id] };
    await assertRefusedAlike(
      await bulkAssignAll(app, headers, all, DRY),
      await bulkAssignAll(app, headers, all),
      422,
      'conflicting_payment_plans',
      before,
    );
  });

  it('answers 400 for a dry_run that is not a boolean', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = await everything();
    const res = await bulkAssign(
      app,
      headers,
      { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] },
      '?dry_run=yes',
    );
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(json(res).errors[0].field, 'dry_run');
    assert.deepEqual(await everything(), before);
  });
});

describe('bulk assignment dry run: security', () => {
  it('answers 403 to a merchant caller and 401 without credentials', async () => {
    const { app, plans, m0, world } = await setup();
    const key = await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId: m0 });
    const before = await everything();
    const forbidden = await bulkAssignAll(app, apiKey(key.api_key), { payment_plan_ids: [plans.visa6.id] }, DRY);
    assert.equal(forbidden.statusCode, 403, forbidden.body);
    assert.equal(json(forbidden).code, 'forbidden');
    const anonymous = await bulkAssign(app, {}, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }, DRY);
    assert.equal(anonymous.statusCode, 401, anonymous.body);
    assert.deepEqual(await everything(), before);
  });

  it("does not reveal another customer's merchants", async () => {
    const { app, headers, plans, o0 } = await setup();
    const res = await bulkAssign(app, headers, { merchant_ids: [o0], payment_plan_ids: [plans.visa6.id] }, DRY);
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(json(res).merchant_ids, [o0]);
  });
});
