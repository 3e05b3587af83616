/**
 * On PostgreSQL: a scheduled change survives what can happen at its instant.
 * The connection to the database is cut just as it falls due (applied once the
 * database answers again), and the process applying it is killed mid-way (all
 * or nothing: nothing of it remains, and another instance applies it once).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase, queryRows } from '../../src/db/database.js';
import { auditEvents, merchantPaymentPlanHistory, scheduledFeeRuleChanges } from '../../src/db/schema.js';
import { json } from '../helpers/app.js';
import { ON_POSTGRES } from '../helpers/database.js';
import { assignmentSnapshot, bulkAssign, seedCatalogue } from '../helpers/plans.js';
import { useProxiedDatabase } from '../helpers/proxied-database.js';
import { waitFor } from '../helpers/wait.js';
import { FAST } from '../helpers/scheduled-changes.js';

describe('scheduled changes and failures', {
  skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (PostgreSQL)',
  timeout: 120_000,
}, () => {
  const faulty = useProxiedDatabase();
  const direct = () => faulty.test.database.db;
  const changeRow = async (id: string) =>
    (await direct().select().from(scheduledFeeRuleChanges).where(eq(scheduledFeeRuleChanges.id, id)))[0]!;
  const appliedAudits = () =>
    direct().select().from(auditEvents).where(eq(auditEvents.action, 'fee_rules.schedule_applied'));

  let scheduledCount = 0;
  let seeded: Awaited<ReturnType<typeof seedCatalogue>> | undefined;

  /** An instance through the proxy, the catalogue (seeded once), and one change scheduled an hour ahead. */
  async function scheduled() {
    const database = await openDatabase({ databaseUrl: faulty.url });
    const app = await buildApp({ config: testConfig(FAST), database, ownsDatabase: true });
    seeded ??= await seedCatalogue(app);
    const catalogue = seeded;
    const res = await bulkAssign(app, catalogue.headers, {
      merchant_ids: [catalogue.m0],
      // The second change swaps back what the first swapped in, so that each changes something.
      payment_plan_ids: [scheduledCount++ === 0 ? catalogue.plans.visa6.id : catalogue.plans.visa3.id],
      effective_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    assert.equal(res.statusCode, 202, res.body);
    return { app, ...catalogue, id: json(res).scheduled_change.id as string };
  }

  const makeDue = (id: string) =>
    direct()
      .update(scheduledFeeRuleChanges)
      .set({ effectiveAt: new Date(Date.now() - 10) })
      .where(eq(scheduledFeeRuleChanges.id, id));

  it('applies a change whose instant comes while the database is unreachable, once it answers', async () => {
    const { app, id } = await scheduled();
    try {
      await faulty.proxy.stop();
      await makeDue(id);
      // Several ticks fail meanwhile; the change stays where it is.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal((await changeRow(id)).status, 'PENDING');
      await faulty.proxy.restart();
      await waitFor(async () => (await changeRow(id)).status === 'APPLIED', 'applied once the database answers', {
        timeoutMs: 15_000,
        intervalMs: 100,
      });
      assert.equal((await appliedAudits()).filter((a) => a.targetId === id).length, 1);
      assert.deepEqual(faulty.crashes, [], 'the process stayed up');
    } finally {
      await faulty.proxy.restart().catch(() => {});
      await app.close();
    }
  });

  it('a process killed while applying leaves nothing of the change, and another instance applies it once', async () => {
    const { app, id } = await scheduled();
    await app.close();
    const before = await assignmentSnapshot(faulty.test.database);
    const historyBefore = (await direct().select().from(merchantPaymentPlanHistory)).length;
    // The change's inserts take 2 s: long enough to kill the process that runs them.
    await direct().execute(
      sql.raw(`CREATE FUNCTION slow_applying() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$`),
    );
    await direct().execute(
      sql.raw(
        'CREATE TRIGGER slow_applying AFTER INSERT ON merchant_payment_plans FOR EACH STATEMENT EXECUTE FUNCTION slow_applying()',
      ),
    );
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `const { createServices } = await import('./src/services.ts');
         const { testConfig } = await import('./src/config.ts');
         const { openDatabase } = await import('./src/db/database.ts');
         const database = await openDatabase({ databaseUrl: process.env.URL });
         await createServices(testConfig({ scheduledChangesPollMs: 100 }), database).start();`,
      ],
      { env: { ...process.env, URL: faulty.test.url }, stdio: 'ignore' },
    );
    try {
      await makeDue(id);
      const sleeping = async () =>
        (
          await queryRows(
            direct(),
            sql`SELECT 1 FROM pg_stat_activity WHERE query LIKE '%INSERT INTO merchant_payment_plans%' AND state = 'active' AND pid <> pg_backend_pid()`,
          )
        ).length > 0;
      await waitFor(sleeping, 'the child is applying the change', { timeoutMs: 20_000, intervalMs: 50 });
      child.kill('SIGKILL');
      // Its backend finds the client gone once the statement ends, and rolls back.
      await waitFor(async () => !(await sleeping()), 'the killed transaction ended', { timeoutMs: 10_000 });
    } finally {
      child.kill('SIGKILL');
      await direct().execute(sql.raw('DROP TRIGGER slow_applying ON merchant_payment_plans'));
      await direct().execute(sql.raw('DROP FUNCTION slow_applying()'));
    }
    await waitFor(
      async () =>
        (
          await queryRows(
            direct(),
            sql`SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND state LIKE 'idle in transaction%'`,
          )
        ).length === 0,
      'no transaction of the killed process remains',
      { timeoutMs: 10_000 },
    );
    assert.equal((await changeRow(id)).status, 'PENDING', 'not applied');
    assert.deepEqual(await assignmentSnapshot(faulty.test.database), before, 'no assignment of it');
    assert.equal((await direct().select().from(merchantPaymentPlanHistory)).length, historyBefore, 'no history of it');
    assert.equal((await appliedAudits()).filter((a) => a.targetId === id).length, 0);

    const restarted = await buildApp({ config: testConfig(FAST), database: faulty.test.database });
    try {
      await waitFor(async () => (await changeRow(id)).status === 'APPLIED', 'applied after the restart', {
        timeoutMs: 10_000,
      });
      assert.equal((await appliedAudits()).filter((a) => a.targetId === id).length, 1);
      assert.notDeepEqual(await assignmentSnapshot(faulty.test.database), before);
    } finally {
      await restarted.close();
    }
  });
});
