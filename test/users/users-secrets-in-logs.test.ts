/** No password, code, secret or temporary password of the users' flows reaches a log line (at trace) or an audit event. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';

const db = useTestDatabase();
const NEW_PASSWORD = 'mauve tractor juggles seven owls';

describe('secrets of the users flows', () => {
  it('never appear in a log line or an audit event', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // An SMTP server nobody listens on: the sender's failure is logged too.
    const config = testConfig({ logLevel: 'trace', smtpUrl: 'smtp://127.0.0.1:9', smtpFrom: 'feegate <a@alpha.test>' });
    const app = await buildApp({
      config,
      database: db.current.database,
      loggerInstance: pino(loggerOptions(config) as object, sink),
    });
    try {
      const world = await seedWorld(app);
      const admin = (await loginAs(app, world.login)).access_token;
      const created = json(
        await app.inject({
          method: 'POST',
          url: '/v1/users',
          headers: bearer(admin),
          payload: { email: 'new@alpha.test' },
        }),
      );
      const secrets: string[] = [created.temporary_password, world.login.password, NEW_PASSWORD];
      const first = json(
        await app.inject({
          method: 'POST',
          url: '/v1/login',
          payload: { user: 'new@alpha.test', password: created.temporary_password },
        }),
      );
      secrets.push(first.challenge.session);
      const done = json(
        await app.inject({
          method: 'POST',
          url: '/v1/login/challenge',
          payload: { name: 'NEW_PASSWORD_REQUIRED', session: first.challenge.session, new_password: NEW_PASSWORD },
        }),
      );
      const token = done.token.access_token;
      const enrol = json(
        await app.inject({
          method: 'POST',
          url: '/v1/users/me/mfa/totp',
          headers: bearer(token),
          payload: { current_password: NEW_PASSWORD },
        }),
      );
      const code = totpCode(enrol.secret);
      secrets.push(enrol.secret, code);
      const verified = json(
        await app.inject({
          method: 'POST',
          url: '/v1/users/me/mfa/totp/verify',
          headers: bearer(token),
          payload: { code },
        }),
      );
      secrets.push(...verified.recovery_codes);
      const reset = json(
        await app.inject({
          method: 'POST',
          url: `/v1/users/${created.attributes.id}/reset-password`,
          headers: bearer(admin),
        }),
      );
      // The user had TOTP and mail is configured: the password went to its mailbox only, never here.
      assert.deepEqual(reset, { temporary_password: null, delivered_by: 'email' });
      await app.inject({ method: 'POST', url: '/v1/login/forgot-password', payload: { user: 'new@alpha.test' } });
      await app.inject({
        method: 'POST',
        url: '/v1/login/confirm-forgot-password',
        payload: { user: 'new@alpha.test', code: '123456', new_password: 'another quiet violet harbour' },
      });
      secrets.push('another quiet violet harbour');
      await app.services.users.stop();
      const audit = JSON.stringify(
        json(await app.inject({ method: 'GET', url: '/v1/audit-events?size=1000', headers: bearer(admin) })),
      );
      assert.match(audit, /user\.password_reset/);
      assert.ok(lines.length > 10);
      for (const secret of secrets) {
        assert.equal(lines.join('').includes(secret), false, `a log line carries ${secret.slice(0, 4)}…`);
        assert.equal(audit.includes(secret), false, `an audit event carries ${secret.slice(0, 4)}…`);
      }
    } finally {
      await app.close();
    }
  });
});
