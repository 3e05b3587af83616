import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { useTestDatabase } from '../helpers/database.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';

const db = useTestDatabase();

/** An app whose log lines (at trace level, as the server writes them) land in `lines`. */
async function loggedApp() {
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
  return { app, lines };
}

describe('logs', () => {
  it('are JSON lines with the request id, and never carry credentials, passwords or keys', async () => {
    const { app, lines } = await loggedApp();
    const secrets: string[] = ['wrong-password-xyz'];
    try {
      const world = await seedWorld(app);
      const token = await loginAs(app, world.login);
      const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
      secrets.push(world.login.password, token.access_token, token.refresh_token, key.api_key);
      await app.inject({
        method: 'GET',
        url: '/v1/users/me',
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      await app.inject({ method: 'GET', url: '/v1/users/me', headers: { 'x-api-key': key.api_key } });
      await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: world.login.user, password: 'wrong-password-xyz' },
      });
      // Logging a whole request object must redact its credential headers.
      app.log.info(
        { request: { headers: { authorization: `Bearer ${token.access_token}`, 'x-api-key': key.api_key } } },
        'explicit',
      );
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

describe('logged URLs', () => {
  it('never carry a secret: values of secret-named parameters and anything that looks like a key or a JWT are [redacted]', async () => {
    const { app, lines } = await loggedApp();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const secrets = [
      key.api_key,
      token.access_token,
      token.refresh_token,
      'hunter2-password',
      'oauth-code-123',
      'shh-its-a-secret',
      'session-token-xyz',
    ];
    const urls = [
      `/v1/users/me?api_key=${key.api_key}`,
      `/v1/users/me?access_token=${token.access_token}`,
      `/v1/merchants?page=0&password=hunter2-password&size=5`,
      `/v1/merchants?code=oauth-code-123`,
      `/v1/merchants?client_secret=shh-its-a-secret&x-session-token=session-token-xyz`,
      `/v1/merchants?q=${token.refresh_token}`,
      `/v1/merchants?q=${encodeURIComponent(key.api_key).replace('_', '%5F')}`,
      `/v1/merchants?${key.api_key}`,
      `/v1/api-keys/${key.api_key}`,
      `/nowhere/${token.access_token}?size=2`,
    ];
    const before = lines.length;
    try {
      for (const url of urls) await app.inject({ method: 'GET', url, headers: { 'x-api-key': key.api_key } });
    } finally {
      await app.close();
    }
    const logged = lines
      .slice(before)
      .map((l) => JSON.parse(l) as { req?: { url: string } })
      .flatMap((l) => (l.req ? [l.req.url] : []));
    assert.equal(logged.length, urls.length, 'one incoming-request line per request');
    const text = lines.join('');
    for (const secret of secrets) assert.ok(!text.includes(secret), `log leaks ${secret.slice(0, 12)}…`);
    assert.deepEqual(logged, [
      '/v1/users/me?api_key=[redacted]',
      '/v1/users/me?access_token=[redacted]',
      '/v1/merchants?page=0&password=[redacted]&size=5',
      '/v1/merchants?code=[redacted]',
      '/v1/merchants?client_secret=[redacted]&x-session-token=[redacted]',
      '/v1/merchants?q=[redacted]',
      '/v1/merchants?q=[redacted]',
      '/v1/merchants?[redacted]',
      '/v1/api-keys/[redacted]',
      '/nowhere/[redacted]?size=2',
    ]);
  });
});
