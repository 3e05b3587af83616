/**
 * History that cannot flood the disk (docs/operations.md): an assignment that
 * changes nothing writes nothing, and assignment requests are limited per
 * customer (ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE), tokens and keys alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, like, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { openDatabase, queryRows } from '../../src/db/database.js';
import { auditEvents, merchantPaymentPlanHistory } from '../../src/db/schema.js';
import { bearer, type Injected, json, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs } from '../helpers/fixtures.js';
import { apiKey, assignmentSnapshot, bulkAssign, bulkAssignAll, seedCatalogue } from '../helpers/plans.js';
import { NEEDS_REDIS, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const h = useTestApp();
const database = () => h.db.current.database;

async function setup(overrides: Partial<Config> = {}) {
  const app = await h.app(overrides);
  return { app, ...(await seedCatalogue(app)) };
}

/** What an assignment can write: the present (each row's xmin changes if it is rewritten), the history and the audit trail. */
async function writes(): Promise<string> {
  const { db } = database();
  const present = await queryRows<{ x: string }>(
    db,
    sql`SELECT merchant_id::text || payment_plan_id::text || xmin::text AS x FROM merchant_payment_plans ORDER BY 1`,
  );
  const [history] = await db.select({ n: count() }).from(merchantPaymentPlanHistory);
  const [audits] = await db.select({ n: count() }).from(auditEvents).where(like(auditEvents.action, 'fee_rules.%'));
  return JSON.stringify({ present: present.map((r) => r.x), history: history!.n, audits: audits!.n });
}

function assertRateLimited(res: Injected, limit: number): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.match(String(res.headers['content-type']), /application\/problem\+json/);
  assert.equal(json(res).code, 'rate_limited');
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers['retry-after']}`);
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], '0');
}

describe('an assignment that changes nothing writes nothing', () => {
  it('no history, no audit record, no rewritten row, for /all and for named merchants', async () => {
    const { app, headers, plans, m0, m1 } = await setup();
    assert.equal(
      (await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa1Own.id, plans.visa6.id] })).statusCode,
      201,
    );
    const before = await writes();
    for (const res of [
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa1Own.id, plans.visa6.id] }),
      await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }),
      await bulkAssign(app, headers, { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa1Own.id] }),
    ]) {
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.equal(await writes(), before);
  });

  it('a change still writes its history and audit record, and only for what changed', async () => {
    const { app, headers, plans, m0 } = await setup();
    const before = JSON.parse(await writes()) as { history: number; audits: number };
    // m0 holds visa1: visa1Own replaces it, one assignment ended.
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa1Own.id] })).statusCode,
      201,
    );
    const after = JSON.parse(await writes()) as { history: number; audits: number };
    assert.deepEqual([after.history - before.history, after.audits - before.audits], [1, 1]);
  });
});

describe('assignment requests per customer per minute', () => {
  it('alternating /all is refused with 429 rate_limited and Retry-After once the default 30 are used, changing nothing', async () => {
    const { app, headers, plans, world } = await setup();
    const alternate = [plans.visa1.id, plans.visa1Own.id];
    for (let i = 0; i < 30; i++) {
      const res = await bulkAssignAll(app, headers, { payment_plan_ids: [alternate[i % 2]!] });
      assert.equal(res.statusCode, 201, `request ${i + 1}: ${res.body}`);
    }
    const before = await writes();
    const snapshot = await assignmentSnapshot(database());
    assertRateLimited(await bulkAssignAll(app, headers, { payment_plan_ids: [alternate[0]!] }), 30);
    assertRateLimited(
      await bulkAssign(app, headers, { merchant_ids: [world.merchantIds[0]], payment_plan_ids: [alternate[0]!] }),
      30,
    );
    assert.equal(await writes(), before);
    assert.deepEqual(await assignmentSnapshot(database()), snapshot);
  });

  it("counts a customer's tokens and keys together, and no other customer's", async () => {
    const { app, headers, plans, world, m0 } = await setup({ assignmentsPerCustomerPerMinute: 3 });
    const key = await issueKey(app, { user: 'integration@alpha.test', customerId: world.customerId });
    const otherToken = (await loginAs(app, world.otherLogin)).access_token;
    assert.equal((await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] })).statusCode, 201);
    assert.equal(
      (await bulkAssign(app, apiKey(key.api_key), { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }))
        .statusCode,
      201,
    );
    assert.equal(
      (await bulkAssignAll(app, apiKey(key.api_key), { payment_plan_ids: [plans.visa1.id] })).statusCode,
      201,
    );
    assertRateLimited(await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }), 3);
    assertRateLimited(await bulkAssignAll(app, apiKey(key.api_key), { payment_plan_ids: [plans.visa6.id] }), 3);
    // A second login of the same customer is no way around it.
    const again = (await loginAs(app, world.login)).access_token;
    assertRateLimited(await bulkAssignAll(app, bearer(again), { payment_plan_ids: [plans.visa6.id] }), 3);
    assert.equal(
      (await bulkAssignAll(app, bearer(otherToken), { payment_plan_ids: [plans.visa1.id] })).statusCode,
      201,
      'another customer',
    );
  });

  it('counts refused assignments (422) too, but not dry runs, which are never refused by it', async () => {
    const { app, headers, plans } = await setup({ assignmentsPerCustomerPerMinute: 2 });
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }, '?dry_run=true')).statusCode,
        200,
      );
    }
    assert.equal((await bulkAssignAll(app, headers, { payment_plan_ids: [plans.foreign.id] })).statusCode, 422);
    assert.equal((await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] })).statusCode, 201);
    assertRateLimited(await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }), 2);
    assert.equal(
      (await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa1.id] }, '?dry_run=true')).statusCode,
      200,
    );
  });

  it('0 turns the limit off', async () => {
    const { app, headers, plans } = await setup({ assignmentsPerCustomerPerMinute: 0 });
    for (let i = 0; i < 35; i++)
      assert.equal((await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] })).statusCode, 201);
  });

  it('is shared by the instances through Redis', { skip: NEEDS_REDIS }, async () => {
    const config = { assignmentsPerCustomerPerMinute: 3, redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniquePrefix() };
    const { app, headers, plans } = await setup(config);
    const url = h.db.current.url;
    const second: FastifyInstance = await buildApp({
      config: testConfig(config),
      database: url ? await openDatabase({ databaseUrl: url }) : database(),
      ownsDatabase: url !== undefined,
    });
    try {
      for (const instance of [app, second, app])
        assert.equal((await bulkAssignAll(instance, headers, { payment_plan_ids: [plans.visa6.id] })).statusCode, 201);
      assertRateLimited(await bulkAssignAll(second, headers, { payment_plan_ids: [plans.visa6.id] }), 3);
      assertRateLimited(await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }), 3);
    } finally {
      await second.close();
    }
  });
});
