/**
 * On PostgreSQL: the server goes away (a TCP proxy in front of it is stopped) and
 * comes back; the service answers 503 meanwhile and recovers by itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createTestDatabase, ON_POSTGRES } from '../helpers/database.js';
import { startTcpProxy, viaProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

describe('database recovery', { skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (PostgreSQL)' }, () => {
  it('answers 503 while PostgreSQL is unreachable and recovers when it returns', async () => {
    const test = await createTestDatabase();
    const target = new URL(test.url!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const database = await openDatabase({ databaseUrl: viaProxy(test.url!, proxy) });
    const app = await buildApp({ config: testConfig(), database, ownsDatabase: true });
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
      await proxy.stop();
      const down = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(down.statusCode, 503);
      const login = await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: 'a@b.test', password: 'x' },
      });
      assert.equal(login.statusCode, 503);
      assert.equal(login.json().code, 'database_unavailable');
      await proxy.restart();
      await waitFor(
        async () => (await app.inject({ method: 'GET', url: '/ready' })).statusCode === 200,
        'recovered without a restart',
        { timeoutMs: 5000, intervalMs: 100 },
      );
    } finally {
      await app.close();
      await proxy.stop();
      await test.drop();
    }
  });
});
