/**
 * One customer cannot starve another. While a customer's assignment lock is
 * held elsewhere (an import running in another process, here a transaction of
 * the test), that customer's assignments wait in memory, holding no pool
 * connection, and past their bound answer 503 server_busy; the other customer's
 * reads keep answering 200. Holding a row lock from a second connection needs
 * PostgreSQL (PGlite has one connection).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { auditEvents, customers } from '../../src/db/schema.js';
import { WAITING_PER_CUSTOMER } from '../../src/db/customer-locks.js';
import { type Injected, bearer, useTestApp } from '../helpers/app.js';
import { ON_POSTGRES } from '../helpers/database.js';
import { loginAs, uuid } from '../helpers/fixtures.js';
import { assignmentSnapshot, bulkAssign, bulkAssignAll, seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();

/** Holds `customerId`'s assignment lock from a connection of its own, as an import in another process does. */
async function holdLock(customerId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: h.db.current.url! });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT id FROM customers WHERE id = $1 FOR NO KEY UPDATE', [customerId]);
  return {
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

function assertBusy(response: Injected): void {
  assert.equal(response.statusCode, 503, response.body);
  assert.equal(response.json().code, 'server_busy');
  assert.ok(Number(response.headers['retry-after']) >= 1, 'a 503 says when to retry');
}

async function assignmentAuditRequests(customerId: string): Promise<string[]> {
  const rows = await h.db.current.database.db.select().from(auditEvents).where(eq(auditEvents.customerId, customerId));
  return rows.filter((r) => r.action.startsWith('fee_rules.')).map((r) => String(r.requestId));
}

async function assignmentAudits(customerId: string): Promise<number> {
  const rows = await h.db.current.database.db.select().from(auditEvents).where(eq(auditEvents.customerId, customerId));
  return rows.filter((r) => r.action.startsWith('fee_rules.')).length;
}

describe('one customer cannot starve another', {
  skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (PostgreSQL)',
  timeout: 90_000,
}, () => {
  it("while one customer's lock is held for 20 s, the other customer's reads keep answering 200", async () => {
    const app = await h.app();
    const { world, plans, headers, m0, m1, o0 } = await seedCatalogue(app);
    const beta = bearer((await loginAs(app, world.otherLogin)).access_token);
    const held = await holdLock(world.customerId);
    let released = false;
    try {
      // More of Alpha's assignments than the pool has connections (10), and more than may wait.
      const sent = WAITING_PER_CUSTOMER + 4;
      const alpha = Array.from({ length: sent }, (_, i) =>
        i % 2 === 0
          ? bulkAssign(app, headers, { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa1Own.id] })
          : bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }),
      );
      const reads: number[] = [];
      const until = Date.now() + 20_000;
      while (Date.now() < until) {
        const answers = await Promise.all([
          app.inject({ method: 'GET', url: '/v1/merchants', headers: beta }),
          app.inject({ method: 'GET', url: `/v1/merchants/${o0}/fee-rules`, headers: beta }),
          app.inject({ method: 'GET', url: '/v1/payment-plans', headers: beta }),
        ]);
        for (const a of answers) assert.equal(a.statusCode, 200, `Beta's read while Alpha's lock is held: ${a.body}`);
        reads.push(...answers.map((a) => a.statusCode));
        // Alpha's waiting writes hold no connection (held, they would take the pool's 10): the one whose turn it
        // is takes one now and then to try the lock, and the background sweeps (change-request expiry each
        // second, scheduled changes, idempotency) one each for a moment, longer on a loaded machine.
        const pool = h.db.current.database.poolStats!();
        assert.ok(pool.total - pool.idle <= 4, `connections checked out while Alpha waits: ${pool.total - pool.idle}`);
        await sleep(250);
      }
      assert.ok(reads.length >= 60, `Beta kept reading (${reads.length} reads)`);

      await held.release();
      released = true;
      const answers = await Promise.all(alpha);
      const done = answers.filter((a) => a.statusCode === 201);
      const refused = answers.filter((a) => a.statusCode !== 201);
      // One waits for the lock itself, WAITING_PER_CUSTOMER behind it; the rest are refused at once.
      assert.equal(
        done.length,
        WAITING_PER_CUSTOMER + 1,
        'those that waited, past lock_timeout, succeed once the lock is free',
      );
      assert.equal(refused.length, sent - done.length);
      for (const r of refused) assertBusy(r);
      // Those that changed nothing (a plan already held) write no audit record either, so compare by request.
      const doneIds = new Set(done.map((a) => String(a.headers['x-request-id'])));
      const audited = await assignmentAuditRequests(world.customerId);
      assert.ok(audited.length >= 1, 'the assignments that changed something are audited');
      assert.deepEqual(
        audited.filter((id) => !doneIds.has(id)),
        [],
        'a refused assignment wrote nothing',
      );
    } finally {
      if (!released) await held.release();
    }
  });

  it('an assignment that waits longer than it may answers 503 server_busy and changes nothing', async () => {
    // The wait is bounded by the statement timeout: the longest one statement of the holder may run.
    const app = await h.app({ databaseStatementTimeoutMs: 1000 });
    const { world, plans, headers, m0 } = await seedCatalogue(app);
    const before = await assignmentSnapshot(h.db.current.database);
    const held = await holdLock(world.customerId);
    try {
      assertBusy(await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }));
      assertBusy(await bulkAssignAll(app, headers, { payment_plan_ids: [plans.visa6.id] }));
      await assert.rejects(
        app.services.importer.importDocument({
          assignments: [{ merchant_id: m0, payment_plan_ids: [plans.visa6.id] }],
        }),
        (err: { code?: string }) => err.code === 'server_busy',
        'an import of the customer waits as long, then gives up',
      );
    } finally {
      await held.release();
    }
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), before);
    assert.equal(await assignmentAudits(world.customerId), 0);
    // Once the lock is free, the same request goes through.
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] })).statusCode,
      201,
    );
  });

  it("an import waits for a customer's lock instead of failing at lock_timeout, then writes", async () => {
    const app = await h.app();
    const { world, plans, m0 } = await seedCatalogue(app);
    const held = await holdLock(world.customerId);
    let finished = false;
    const importing = app.services.importer
      .importDocument({
        customers: [{ id: world.customerId, name: 'Alpha renamed' }],
        merchants: [{ id: uuid('d'), customer_id: world.customerId, name: 'Alpha new' }],
        assignments: [{ merchant_id: m0, payment_plan_ids: [plans.visa6.id] }],
      })
      .finally(() => {
        finished = true;
      });
    // Longer than lock_timeout (5 s): a wait inside PostgreSQL would have failed by now.
    await sleep(6000);
    assert.equal(finished, false, 'the import waits while the lock is held');
    await held.release();
    const summary = await importing;
    assert.equal(summary.assignments, 1);
    const [alpha] = await h.db.current.database.db.select().from(customers).where(eq(customers.id, world.customerId));
    assert.equal(alpha?.name, 'Alpha renamed');
  });
});
