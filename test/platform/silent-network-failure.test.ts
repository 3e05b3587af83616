/**
 * On PostgreSQL: a LISTEN connection that dies without a reset (a NAT or
 * firewall forgot it; a TCP proxy swallows its bytes here) is noticed by its
 * heartbeat, so a logout or a key deletion on one instance is refused by another
 * within 5 s of its 204, even though the notice never arrives; and the
 * connection comes back by itself when the path does.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { LISTEN_APPLICATION_NAME } from '../../src/db/postgres.js';
import { deleteKey, whoAmI } from '../helpers/api-keys.js';
import { bearer } from '../helpers/app.js';
import { ON_POSTGRES } from '../helpers/database.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { useProxiedDatabase } from '../helpers/proxied-database.js';
import { waitFor } from '../helpers/wait.js';

/** The promise: refused by every instance never later than this after the 204. */
const BOUND_MS = 5000;

/** Milliseconds from now until `refused` holds; fails the test past the bound. */
async function msUntil(refused: () => Promise<boolean>, what: string): Promise<number> {
  const start = Date.now();
  while (!(await refused())) {
    assert.ok(Date.now() - start <= BOUND_MS, `${what} was still accepted ${BOUND_MS} ms after its 204`);
    await sleep(20);
  }
  const elapsed = Date.now() - start;
  assert.ok(elapsed <= BOUND_MS, `${what} was refused only after ${elapsed} ms`);
  return elapsed;
}

describe('a LISTEN connection that dies without a reset', {
  skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (PostgreSQL)',
  timeout: 60_000,
}, () => {
  const faulty = useProxiedDatabase();

  it('is noticed by its heartbeat, counted as disconnected, and replaced when the path comes back', async () => {
    const database = await openDatabase({ databaseUrl: faulty.url });
    const events: boolean[] = [];
    const messages: string[] = [];
    const unlisten = await database.listen('feegate_test_heartbeat', {
      onMessage: (payload) => messages.push(payload),
      onConnectedChange: (connected) => events.push(connected),
    });
    const notify = (payload: string) =>
      faulty.test.database.db.execute(sql.raw(`NOTIFY feegate_test_heartbeat, '${payload}'`));
    try {
      assert.deepEqual(events, [true]);
      await notify('before');
      await waitFor(() => messages.includes('before'), 'a notice arrives while the path is sound');

      faulty.proxy.blackHole({ applicationName: LISTEN_APPLICATION_NAME });
      await notify('lost');
      await waitFor(() => events.at(-1) === false, 'the dead connection counts as disconnected', {
        timeoutMs: BOUND_MS,
      });
      assert.ok(!messages.includes('lost'), 'the notice was swallowed');
      const swallowed = faulty.proxy
        .connections()
        .filter((c) => c.swallowed && c.startup.includes(LISTEN_APPLICATION_NAME));
      assert.ok(swallowed.length >= 1);

      faulty.proxy.heal();
      await waitFor(() => events.at(-1) === true, 'it listens again once the path is back', { timeoutMs: 10_000 });
      assert.ok(
        faulty.proxy.connections().every((c) => !c.swallowed || !c.clientOpen),
        'the dead connections were closed, not left open',
      );
      await notify('after');
      await waitFor(() => messages.includes('after'), 'notices arrive on the new connection');
      // The heartbeat's own notices reach nobody's handler.
      assert.deepEqual(messages, ['before', 'after']);
    } finally {
      faulty.proxy.heal();
      await unlisten();
      await database.close();
    }
  });

  it('a logout and a key deletion on one instance are refused by another within 5 s, however silent the failure', async () => {
    // A writes directly; B reads through the proxy, its pool and its LISTEN connections alike.
    const a = await buildApp({ config: testConfig(), database: faulty.test.database });
    let b: FastifyInstance | undefined;
    let bDatabase: Database | undefined;
    try {
      bDatabase = await openDatabase({ databaseUrl: faulty.url });
      b = await buildApp({ config: testConfig(), database: bDatabase, ownsDatabase: true });
      await b.ready();
      const world = await seedWorld(a);
      const login = await loginAs(a, world.login);
      const key = await issueKey(a, { user: 'integration@alpha.test', customerId: world.customerId });
      const tokenWorksOnB = async () =>
        (await b!.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(login.access_token) })).statusCode ===
        200;
      const keyWorksOnB = async () => (await whoAmI(b!, key.api_key)).statusCode === 200;
      // B knows both from memory now: the token's login is not revoked, the key is verified and cached.
      assert.ok(await tokenWorksOnB());
      assert.ok(await keyWorksOnB());
      assert.ok(await keyWorksOnB());

      faulty.proxy.blackHole({ applicationName: LISTEN_APPLICATION_NAME });
      const ownerToken = (await loginAs(a, world.login)).access_token;
      const [logout, deletion] = await Promise.all([
        a.inject({ method: 'POST', url: '/v1/logout', headers: bearer(login.access_token) }),
        deleteKey(a, { token: ownerToken }, key.id),
      ]);
      assert.equal(logout.statusCode, 204);
      assert.equal(deletion.statusCode, 204);
      const [tokenMs, keyMs] = await Promise.all([
        msUntil(async () => !(await tokenWorksOnB()), 'the logged-out token'),
        msUntil(async () => !(await keyWorksOnB()), 'the deleted key'),
      ]);
      assert.ok(tokenMs <= BOUND_MS && keyMs <= BOUND_MS);

      // Still refused once B listens again: what it missed was loaded, not forgotten.
      faulty.proxy.heal();
      await sleep(1500);
      assert.equal(await tokenWorksOnB(), false);
      assert.equal(await keyWorksOnB(), false);
    } finally {
      faulty.proxy.heal();
      await b?.close();
      if (!b) await bDatabase?.close();
      await a.close();
    }
  });
});
