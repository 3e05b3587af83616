/**
 * A webhook's secret never reaches a log line: not when it is set, changed or
 * refused, nor while deliveries signed with it succeed and fail (trace level,
 * as the server writes its lines).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { createKey } from '../helpers/api-keys.js';
import { useTestDatabase } from '../helpers/database.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { createWebhook, deliveringTo, startReceiver, subscribe, webhookRequest } from '../helpers/webhooks.js';

const db = useTestDatabase();

describe('webhook secrets and the logs', () => {
  it('never writes a secret to a log line', async () => {
    const receiver = await startReceiver();
    receiver.respond((_got, response) => response.writeHead(receiver.received.length === 1 ? 500 : 204).end());
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = testConfig({ ...deliveringTo(receiver), logLevel: 'trace' });
    const app = await buildApp({
      config,
      database: db.current.database,
      loggerInstance: pino(loggerOptions(config) as object, sink),
    });
    const secrets = ['Logged#Never-1', 'Rotated#Never-2', 'refused-never-3'];
    try {
      const world = await seedWorld(app);
      const token = (await loginAs(app, world.login)).access_token;
      const hook = await subscribe(app, { token }, receiver.url, ['API_KEY_CREATED'], secrets[0]);
      await webhookRequest(app, { token }, 'PATCH', `/v1/webhooks/${hook}`, { secret_key: secrets[1] });
      const refused = await createWebhook(
        app,
        { token },
        {
          notification_url: receiver.url,
          notification_type: ['API_KEY_CREATED'],
          secret_key: secrets[2],
        },
      );
      assert.equal(refused.statusCode, 400);
      await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
      await receiver.waitFor(2);
    } finally {
      await app.close();
      await receiver.close();
    }
    assert.ok(lines.length > 10, 'the app logged');
    for (const secret of secrets)
      assert.ok(!lines.some((line) => line.includes(secret)), `no log line carries ${secret}`);
  });
});
