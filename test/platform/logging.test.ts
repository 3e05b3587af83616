import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { useTestDatabase } from '../helpers/database.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';

const db = useTestDatabase();

describe('logs', () => {
  it('are JSON lines with the request id, and never carry credentials, passwords or keys', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = testConfig({ logLevel: 'trace' });
    const logger = pino(loggerOptions(config) as object, sink);
    const app = await buildApp({ config, database: db.current.database, loggerInstance: logger });
    const secrets: string[] = ['wrong-password-xyz'];
    try {
      const world = await seedWorld(app);
      const token = await loginAs(app, world.login);
      const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
      secrets.push(world.login.password, token.access_token, token.refresh_token, key.api_key);
      await app.inject({ method: 'GET', url: '/v1/users/me', headers: { authorization: `Bearer ${token.access_token}` } });
      await app.inject({ method: 'GET', url: '/v1/users/me', headers: { 'x-api-key': key.api_key } });
      await app.inject({ method: 'POST', url: '/v1/login', payload: { user: world.login.user, password: 'wrong-password-xyz' } });
      // Logging a whole request object must redact its credential headers.
      app.log.info({ request: { headers: { authorization: `Bearer ${token.access_token}`, 'x-api-key': key.api_key } } }, 'explicit');
    } finally {
      await app.close();
    }
    const text = lines.join('');
    assert.ok(lines.length > 5);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line));
    assert.ok(lines.some((l) => 'reqId' in JSON.parse(l)));
    for (const secret of secrets) assert.ok(!text.includes(secret), `log leaks ${secret}`);
    assert.ok(text.includes('[redacted]'));
  });
});
