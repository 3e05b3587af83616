/**
 * On PostgreSQL: the path to the server hangs without a reset, again and again
 * (a TCP proxy swallows every byte of every connection, then lets new ones
 * through). Queries caught in a hang give up at the client's deadline and their
 * connections are destroyed, never returned to the pool; /ready says 503 while no
 * connection can be had; and afterwards the service answers normally without a
 * restart. The timeouts PostgreSQL enforces itself are set on every connection.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { describeError } from '../../src/cli-errors.js';
import { testConfig } from '../../src/config.js';
import { type Database, isDatabaseUnavailable, openDatabase, queryRows, sqlState } from '../../src/db/database.js';
import { createKey } from '../helpers/api-keys.js';
import { customers } from '../../src/db/schema.js';
import { bearer } from '../helpers/app.js';
import { ON_POSTGRES, resetDatabase } from '../helpers/database.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { useProxiedDatabase } from '../helpers/proxied-database.js';
import { waitFor } from '../helpers/wait.js';

const HANGS = 4;
/** Short, so that the test waits seconds for the client's deadline rather than a minute. */
const STATEMENT_TIMEOUT_MS = 1000;
const POOL_SIZE = 4;

describe('database hangs without a reset', {
  skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (PostgreSQL)',
  timeout: 120_000,
}, () => {
  const faulty = useProxiedDatabase();

  beforeEach(async () => {
    await resetDatabase(faulty.test.database);
  });

  it('gives up stuck queries, destroys their connections, and answers normally afterwards without a restart', async () => {
    const database = await openDatabase({
      databaseUrl: faulty.url,
      poolSize: POOL_SIZE,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    });
    const app = await buildApp({ config: testConfig(), database, ownsDatabase: true });
    let closed = false;
    try {
      const world = await seedWorld(app);
      const token = (await loginAs(app, world.login)).access_token;
      const read = () => app.inject({ method: 'GET', url: '/v1/merchants', headers: bearer(token) });
      assert.equal((await read()).statusCode, 200);
      // Every connection caught in a hang is destroyed, not returned to the pool
      // (background work, such as the reload after a LISTEN connection came back,
      // gives its own up at its deadline too), and the service answers again.
      const recovered = async (after: string) => {
        await waitFor(
          () => faulty.proxy.connections().every((c) => !c.swallowed || !c.clientOpen),
          `${after}: a swallowed connection is left open`,
          {
            timeoutMs: 2 * (STATEMENT_TIMEOUT_MS + 1000) + 3000,
          },
        );
        for (let i = 0; i < 3 * POOL_SIZE; i++) assert.equal((await read()).statusCode, 200, `${after}: read ${i}`);
      };

      for (let hang = 0; hang < HANGS; hang++) {
        faulty.proxy.blackHole();
        // More requests than connections: every pooled connection is caught mid-query, reads and transactions alike.
        const caught = [
          ...Array.from({ length: POOL_SIZE + 1 }, () => read()),
          createKey(app, { token }, { user: `hang-${hang}@alpha.test`, customer_id: world.customerId }),
        ];
        if (hang === 0) {
          const ready = await app.inject({ method: 'GET', url: '/ready' });
          assert.equal(ready.statusCode, 503, '/ready says so while no connection can be had');
          assert.equal(
            (await app.inject({ method: 'GET', url: '/health' })).statusCode,
            200,
            '/health does not touch the database',
          );
        } else {
          await sleep(500);
        }
        faulty.proxy.heal();
        const answers = await Promise.race([Promise.all(caught), sleep(15_000).then(() => 'hung' as const)]);
        assert.notEqual(answers, 'hung', `hang ${hang}: requests caught in it are still waiting 15 s later`);
        // Those that had a connection in the hang answer 503; those still waiting for one may get a new one.
        const refused = (answers as Awaited<ReturnType<typeof read>>[]).filter(
          (a) => a.statusCode !== 200 && a.statusCode !== 201,
        );
        assert.ok(refused.length >= 1, `hang ${hang} caught some requests`);
        for (const answer of refused) {
          assert.equal(answer.statusCode, 503, answer.body);
          assert.equal(answer.json().code, 'database_unavailable');
          assert.ok(Number(answer.headers['retry-after']) >= 1);
        }
        await recovered(`after hang ${hang}`);
      }
      assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
      assert.deepEqual(faulty.crashes, []);

      const closing = app.close();
      closed = await Promise.race([closing.then(() => true), sleep(10_000).then(() => false)]);
      assert.ok(closed, 'the service closes within 10 s after the hangs: no connection is stuck');
    } finally {
      if (!closed) await app.close();
    }
  });

  it('a hang shorter than the deadline costs nothing: held requests finish when the bytes flow again', async () => {
    const database = await openDatabase({
      databaseUrl: faulty.url,
      poolSize: POOL_SIZE,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    });
    const app = await buildApp({ config: testConfig(), database, ownsDatabase: true });
    try {
      const world = await seedWorld(app);
      const token = (await loginAs(app, world.login)).access_token;
      const read = () => app.inject({ method: 'GET', url: '/v1/merchants', headers: bearer(token) });
      assert.equal((await read()).statusCode, 200);
      faulty.proxy.pause();
      const held = Array.from({ length: POOL_SIZE }, () => read());
      await sleep(STATEMENT_TIMEOUT_MS / 2);
      faulty.proxy.resume();
      for (const answer of await Promise.all(held)) assert.equal(answer.statusCode, 200, answer.body);
      assert.ok(
        faulty.proxy.connections().every((c) => c.swallowed || c.clientOpen),
        'no connection was given up',
      );
    } finally {
      faulty.proxy.resume();
      await app.close();
    }
  });

  it('a lock waited for longer than lock_timeout fails the statement, and the command line names the setting', async () => {
    const database = await openDatabase({ databaseUrl: faulty.test.url!, lockTimeoutMs: 200 });
    const holder = new pg.Client({ connectionString: faulty.test.url! });
    await holder.connect();
    try {
      await database.db.insert(customers).values({ id: '00000000-0000-4000-8000-000000000001', name: 'Held' });
      await holder.query('BEGIN');
      await holder.query("UPDATE customers SET name = 'Holding' WHERE id = '00000000-0000-4000-8000-000000000001'");
      const err = await database.db
        .execute(sql`UPDATE customers SET name = 'Waiting' WHERE id = '00000000-0000-4000-8000-000000000001'`)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.equal(sqlState(err), '55P03');
      assert.ok(isDatabaseUnavailable(err), 'answered 503 database_unavailable');
      assert.match(describeError(err), /longer than DATABASE_LOCK_TIMEOUT_MS/);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
      await database.close();
    }
  });

  describe('limits set on every connection', () => {
    let database: Database;
    before(async () => {
      database = await openDatabase({
        databaseUrl: faulty.test.url!,
        statementTimeoutMs: STATEMENT_TIMEOUT_MS,
        lockTimeoutMs: 200,
      });
    });
    after(async () => {
      await database?.close();
    });

    it('statement_timeout, lock_timeout and idle_in_transaction_session_timeout, in and out of transactions', async () => {
      const settings = (db: Database['db']) =>
        queryRows<Record<string, string>>(
          db,
          sql`SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
                     current_setting('idle_in_transaction_session_timeout') AS idle_in_transaction`,
        );
      const expected = [{ statement: '1s', lock: '200ms', idle_in_transaction: '1min' }];
      assert.deepEqual(await settings(database.db), expected);
      assert.deepEqual(await database.db.transaction((tx) => settings(tx)), expected);
      const defaults = await openDatabase({ databaseUrl: faulty.test.url! });
      try {
        assert.deepEqual(await settings(defaults.db), [{ statement: '1min', lock: '5s', idle_in_transaction: '1min' }]);
      } finally {
        await defaults.close();
      }
    });

    it('a statement over the limit is cancelled and counts as the database not answering (503)', async () => {
      const err = await database.db.execute(sql`SELECT pg_sleep(3)`).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal(sqlState(err), '57014');
      assert.ok(isDatabaseUnavailable(err));
      assert.match(
        describeError(err),
        /longer than DATABASE_STATEMENT_TIMEOUT_MS/,
        'the command line names the setting',
      );
      // The connection is sound afterwards.
      assert.deepEqual(await queryRows(database.db, sql`SELECT 1 AS one`), [{ one: 1 }]);
    });
  });
});
