/**
 * The embedded database as the service runs it: PGlite in a worker thread
 * (src/db/pglite-rpc.ts). The rest of the suite runs PGlite in-process unless
 * TEST_PGLITE_WORKER=1; this file always goes through the worker.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { isDatabaseUnavailable, queryRows, sql, sqlState } from '../../src/db/database.js';
import { customers, users } from '../../src/db/schema.js';
import { PgliteWorkerClient } from '../../src/db/pglite-rpc.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, deleteKey, headersFor, listKeys } from '../helpers/api-keys.js';
import { createTestDatabase, ON_POSTGRES } from '../helpers/database.js';
import { customerSession, uuid } from '../helpers/fixtures.js';
import { bulkAssignAll, plansByMerchant, seedCatalogue } from '../helpers/plans.js';
import { waitFor } from '../helpers/wait.js';

process.env.TEST_PGLITE_WORKER = '1';
const skip = ON_POSTGRES && 'PGlite only (TEST_DATABASE_URL is set)';
const h = useTestApp();
const database = () => h.db.current.database;

describe('embedded database in a worker thread: the API over it', { skip }, () => {
  it('runs PGlite in a worker, not in this thread', () => {
    assert.ok(Object.getPrototypeOf(database().db).constructor.name.includes('Pglite'));
    const client = (database().db as unknown as { $client: unknown }).$client;
    assert.ok(client instanceof PgliteWorkerClient);
  });

  it('logs in, creates, lists and deletes a key; a second instance refuses it at once through NOTIFY', async () => {
    const { app, world, token } = await customerSession(h);
    const created = await createKey(app, { token }, { user: 'integration@alpha.test', customer_id: world.customerId });
    assert.equal(created.statusCode, 201, created.body);
    const key = json(created);
    const second = await buildApp({ config: testConfig(), database: database() });
    try {
      const me = () => second.inject({ method: 'GET', url: '/v1/users/me', headers: headersFor({ key: key.api_key }) });
      assert.equal((await me()).statusCode, 200);
      assert.equal((await me()).statusCode, 200, 'served from its cache of verified keys');
      assert.deepEqual(
        json(await listKeys(app, { token })).data.map((k: { id: string }) => k.id),
        [key.id],
      );
      assert.equal((await deleteKey(app, { token }, key.id)).statusCode, 204);
      await waitFor(async () => (await me()).statusCode === 401, 'the second instance refuses the deleted key', {
        timeoutMs: 1000,
      });
    } finally {
      await second.close();
    }
  });

  it('assigns plans to all merchants in one transaction', async () => {
    const app = await h.app();
    const { headers, plans, m0, m1 } = await seedCatalogue(app);
    const res = await bulkAssignAll(app, headers, { payment_plan_ids: [plans.master1.id] });
    assert.equal(res.statusCode, 201, res.body);
    const after = await plansByMerchant(database());
    assert.ok(after.get(m0)?.includes(plans.master1.id));
    assert.ok(after.get(m1)?.includes(plans.master1.id));
  });
});

describe('embedded database in a worker thread: transactions, errors, notifications', { skip }, () => {
  it('rolls a transaction back when its callback throws, and passes the error on', async () => {
    const { db } = database();
    const id = uuid('c');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.insert(customers).values({ id, name: 'Doomed' });
        assert.equal((await tx.select().from(customers).where(eq(customers.id, id))).length, 1, 'visible inside');
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.equal((await db.select().from(customers).where(eq(customers.id, id))).length, 0);
  });

  it('keeps other queries out of an open transaction: they wait and then see its committed result', async () => {
    const { db } = database();
    const id = uuid('c');
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = db.transaction(async (tx) => {
      await tx.insert(customers).values({ id, name: 'Inside' });
      events.push('inserted');
      await held;
      events.push('committing');
    });
    await waitFor(async () => events.includes('inserted'), 'the transaction has inserted');
    const outside = db
      .select()
      .from(customers)
      .where(eq(customers.id, id))
      .then((rows) => {
        events.push(`outside saw ${rows.length}`);
      });
    await sleep(100);
    assert.deepEqual(events, ['inserted'], 'the outside query waits while the transaction is open');
    release();
    await Promise.all([transaction, outside]);
    assert.deepEqual(events, ['inserted', 'committing', 'outside saw 1']);
  });

  it('rolls back a transaction whose statement fails, with the SQLSTATE and constraint of the error', async () => {
    const { db } = database();
    const customerId = uuid('c');
    await db.insert(customers).values({ id: customerId, name: 'Alpha' });
    await db.insert(users).values({ email: 'taken@alpha.test', type: 'CUSTOMER', customerId });
    const error = await db
      .transaction(async (tx) => {
        await tx.insert(customers).values({ id: uuid('c'), name: 'Beta' });
        await tx.insert(users).values({ email: 'taken@alpha.test', type: 'CUSTOMER', customerId });
      })
      .then(
        () => assert.fail('the duplicate was accepted'),
        (err: unknown) => err,
      );
    assert.equal(sqlState(error), '23505');
    assert.equal((error as { cause?: { constraint?: string } }).cause?.constraint, 'users_integration_email_unique');
    assert.equal(isDatabaseUnavailable(error), false);
    assert.equal((await db.select().from(customers)).length, 1, 'Beta was rolled back');
  });

  it('delivers a NOTIFY once its transaction commits, and never for a rolled-back one', async () => {
    const { db } = database();
    const received: string[] = [];
    const unlisten = await database().listen('feegate_test_channel', {
      onMessage: (payload) => received.push(payload),
    });
    try {
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.execute(sql`SELECT pg_notify('feegate_test_channel', 'rolled back')`);
          throw new Error('abort');
        }),
      );
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let notified = false;
      const committed = db.transaction(async (tx) => {
        await tx.execute(sql`SELECT pg_notify('feegate_test_channel', 'committed')`);
        notified = true;
        await held;
      });
      await waitFor(async () => notified, 'the transaction has sent its NOTIFY');
      await sleep(50);
      assert.deepEqual(received, [], 'nothing before the commit');
      release();
      await committed;
      await waitFor(async () => received.length > 0, 'the notification', { timeoutMs: 1000 });
      assert.deepEqual(received, ['committed']);
    } finally {
      await unlisten();
    }
  });

  it("parses results as Drizzle's pglite driver asks: timestamps as text (its own parsers, applied in this thread), numbers, JSON", async () => {
    const [row] = await queryRows<{ at: string; n: number; doc: { a: number[] } }>(
      database().db,
      sql`SELECT '2026-01-02 03:04:05.678+00'::timestamptz AS at, 42::int AS n, '{"a":[1,2]}'::jsonb AS doc`,
    );
    assert.equal(row!.at, '2026-01-02 03:04:05.678+00');
    assert.equal(row!.n, 42);
    assert.deepEqual(row!.doc, { a: [1, 2] });
    const [customer] = await database().db.insert(customers).values({ name: 'Dated' }).returning();
    assert.ok(customer!.createdAt instanceof Date);
  });

  it('answers "database unavailable" once closed', async () => {
    const own = await createTestDatabase();
    await own.database.ping();
    await own.drop();
    const error = await own.database.ping().catch((err: unknown) => err);
    assert.equal(isDatabaseUnavailable(error), true);
  });
});
