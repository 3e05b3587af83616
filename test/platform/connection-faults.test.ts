/**
 * On PostgreSQL: every connection is cut, several times, while parallel writes
 * run (key creation and deletion, bulk assignments). The process lives, the
 * requests caught by a cut answer 503 database_unavailable, nothing is half
 * written, and writes succeed again within seconds without a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase, queryRows } from '../../src/db/database.js';
import { createKey, deleteKey } from '../helpers/api-keys.js';
import { ON_POSTGRES } from '../helpers/database.js';
import { loginAs, seedWorld, uuid } from '../helpers/fixtures.js';
import { bearer } from '../helpers/app.js';
import { plan } from '../helpers/plans.js';
import { useProxiedDatabase } from '../helpers/proxied-database.js';

const MERCHANTS = 40;
const PLANS = 8;
const CUTS = 5;

describe('lost PostgreSQL connections', {
  skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (PostgreSQL)',
  timeout: 120_000,
}, () => {
  const faulty = useProxiedDatabase();
  let app: FastifyInstance;
  let closed = false;

  before(async () => {
    const database = await openDatabase({ databaseUrl: faulty.url, poolSize: 8 });
    // Many assignments of one customer within a minute: what is measured here is the database, not the per-customer limit.
    app = await buildApp({ config: testConfig({ assignmentsPerCustomerPerMinute: 0 }), database, ownsDatabase: true });
  });

  after(async () => {
    if (!closed) await app?.close();
  });

  it('keeps the process up, answers 503, writes all or nothing, and recovers', async () => {
    const plans = Array.from({ length: PLANS }, (_, i) => plan({ card_brand: `BRAND_${i}` }));
    const world = await seedWorld(app, { payment_plans: plans });
    const merchantIds = Array.from({ length: MERCHANTS }, () => uuid('d'));
    await app.services.importer.importDocument({
      merchants: merchantIds.map((id, i) => ({ id, customer_id: world.customerId, name: `Faulty ${i}` })),
    });
    const token = (await loginAs(app, world.login)).access_token;
    const credentials = { token };

    const statuses: Array<{ op: string; status: number; code?: string; retryAfter?: string }> = [];
    const createdKeys: string[] = [];
    const assignedOk = new Set<string>();
    let running = true;
    let n = 0;

    const worker = async (w: number) => {
      while (running) {
        const op = ['create', 'delete', 'assign'][n++ % 3]!;
        let response: Awaited<ReturnType<typeof createKey>> | undefined;
        if (op === 'create') {
          response = await createKey(app, credentials, {
            user: `fault-${w}-${n}@alpha.test`,
            customer_id: world.customerId,
          });
          if (response.statusCode === 201) createdKeys.push(response.json().id);
        } else if (op === 'delete' && createdKeys.length > 0) {
          response = await deleteKey(app, credentials, createdKeys.shift()!);
        } else {
          const planId = plans[n % PLANS]!.id;
          response = await app.inject({
            method: 'POST',
            url: '/v1/fee-rules/bulk-assign',
            headers: bearer(token),
            payload: { merchant_ids: merchantIds, payment_plan_ids: [planId] },
          });
          if (response.statusCode === 201) assignedOk.add(planId);
        }
        const body = response.statusCode >= 400 ? response.json() : undefined;
        statuses.push({
          op,
          status: response.statusCode,
          code: body?.code,
          retryAfter: response.headers['retry-after'] as string | undefined,
        });
      }
    };

    const workers = Array.from({ length: 6 }, (_, w) => worker(w));
    for (let i = 0; i < CUTS; i++) {
      await new Promise((r) => setTimeout(r, 400));
      faulty.proxy.cut();
    }
    // The server away for a moment, then back.
    await faulty.proxy.stop();
    await new Promise((r) => setTimeout(r, 300));
    await faulty.proxy.restart();
    await new Promise((r) => setTimeout(r, 300));
    running = false;
    await Promise.all(workers);

    assert.deepEqual(faulty.crashes, [], 'no uncaught exception or unhandled rejection');
    const unexpected = statuses.filter((s) => ![201, 204, 503].includes(s.status));
    assert.deepEqual(unexpected, [], 'every answer is a success or a 503');
    const refused = statuses.filter((s) => s.status === 503);
    assert.ok(refused.length > 0, 'the cuts caught some requests');
    for (const r of refused) {
      assert.equal(r.code, 'database_unavailable');
      assert.ok(Number(r.retryAfter) >= 1, 'a 503 says when to retry');
    }

    // Writes succeed again within seconds, without a restart.
    let recovered = 0;
    for (let i = 0; i < 50 && recovered !== 201; i++) {
      recovered = (await createKey(app, credentials, { user: `after-${i}@alpha.test`, customer_id: world.customerId }))
        .statusCode;
      if (recovered !== 201) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(recovered, 201, 'a write succeeds after the cuts');

    // Nothing half written: read directly, not through the proxy.
    const direct = faulty.test.database.db;
    const keysWithoutAudit = await queryRows<{ id: string }>(
      direct,
      sql`
      SELECT k.id FROM api_keys k
      WHERE NOT EXISTS (SELECT 1 FROM audit_events a WHERE a.action = 'api_key.created' AND a.target_id = k.id::text)
         OR (k.status = 'DELETED' AND NOT EXISTS (SELECT 1 FROM audit_events a WHERE a.action = 'api_key.deleted' AND a.target_id = k.id::text))`,
    );
    assert.deepEqual(keysWithoutAudit, [], 'every key change has its audit record');
    const holders = await queryRows<{ plan: string; merchants: number }>(
      direct,
      sql`
      SELECT payment_plan_id::text AS plan, count(*)::int AS merchants FROM merchant_payment_plans GROUP BY payment_plan_id`,
    );
    const audited = await queryRows<{ plan: string }>(
      direct,
      sql`
      SELECT DISTINCT jsonb_array_elements_text(details->'payment_plan_ids') AS plan FROM audit_events WHERE action = 'fee_rules.bulk_assign'`,
    );
    const auditedPlans = new Set(audited.map((r) => r.plan));
    for (const h of holders) {
      assert.equal(h.merchants, MERCHANTS, `plan ${h.plan} is held by all ${MERCHANTS} merchants or none`);
      assert.ok(auditedPlans.has(h.plan), `plan ${h.plan}'s assignment has its audit record`);
    }
    const held = new Set(holders.map((h) => h.plan));
    for (const planId of assignedOk) assert.ok(held.has(planId), `an answered 201 for plan ${planId} is applied`);
    for (const planId of auditedPlans) assert.ok(held.has(planId), `an audited assignment of ${planId} is applied`);

    // Every client went back to the pool: closing ends it at once (a client lost
    // while BEGIN was sent used to stay checked out, and close waited for ever).
    const closing = app.close();
    const shutDown = await Promise.race([
      closing.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 10_000)),
    ]);
    closed = shutDown;
    assert.ok(shutDown, 'the service closes within 10 s after the cuts: no pool client was lost');
  });
});
