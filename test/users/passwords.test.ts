/** Back-office users' passwords: the first login, a change of one's own, an ADMIN's reset, a forgotten one by mail. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { mailOutbox } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey, loginAs, uuid } from '../helpers/fixtures.js';
import { auditActions, createUser, STRONG, smtpServer, userWithRole } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

describe('first login and passwords', () => {
  it('answers NEW_PASSWORD_REQUIRED; a session is good once, for its user, and weak passwords are refused', async () => {
    const { app, token: admin } = await customerSession(h);
    const created = await createUser(app, admin, { email: 'new@alpha.test' });
    const login = json(
      await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: 'new@alpha.test', password: created.temporary_password },
      }),
    );
    assert.equal(login.token, undefined);
    assert.equal(login.challenge.name, 'NEW_PASSWORD_REQUIRED');
    const session = login.challenge.session;
    const answer = (new_password: string, name = 'NEW_PASSWORD_REQUIRED', s = session) =>
      app.inject({ method: 'POST', url: '/v1/login/challenge', payload: { name, session: s, new_password } });
    for (const weak of ['short-pw', 'password123456', 'new@alpha.test-is-mine', 'x'.repeat(257)]) {
      const res = await answer(weak);
      assert.equal(res.statusCode, 400, weak);
      assert.equal(json(res).code, 'weak_password');
    }
    assert.equal(json(await answer(STRONG, 'SOFTWARE_TOKEN_MFA')).code, 'invalid_challenge');
    assert.equal(json(await answer(STRONG, 'NEW_PASSWORD_REQUIRED', 'fgc_wrong')).code, 'invalid_challenge');
    const ok = await answer(STRONG);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.ok(json(ok).token.access_token);
    const reused = await answer('another fine long passphrase');
    assert.equal(reused.statusCode, 401);
    assert.equal(json(reused).code, 'invalid_challenge');
    const listed = json(
      await app.inject({ method: 'GET', url: '/v1/users?email=new@alpha.test', headers: bearer(admin) }),
    );
    assert.equal(listed.users[0].status, 'CONFIRMED');
  });

  it('changes the own password: a wrong current one is 401 and counts toward the lockout, others sessions end', async () => {
    const { app, token: admin } = await customerSession(h, { loginMaxFailures: 3 });
    const member = await userWithRole(app, admin, 'm@alpha.test', 'MEMBER');
    const second = (await loginAs(app, { user: 'm@alpha.test', password: STRONG })).access_token;
    const change = (current_password: string, new_password = 'a quiet violet harbour at noon') =>
      app.inject({
        method: 'POST',
        url: '/v1/users/me/password',
        headers: bearer(member.token),
        payload: { current_password, new_password },
      });
    const guesses = await Promise.all(Array.from({ length: 6 }, () => change('wrong-guess')));
    const codes = guesses.map((g) => g.statusCode).sort();
    assert.deepEqual(codes.filter((c) => c === 401).length, 3, String(codes));
    assert.ok(codes.filter((c) => c === 429).length === 3);
    await app.services.auth.unlock('m@alpha.test');
    const weak = await change(STRONG, 'm@alpha.test123456');
    assert.equal(json(weak).code, 'weak_password');
    assert.equal((await change(STRONG)).statusCode, 204);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(member.token) })).statusCode,
      200,
    );
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(second) })).statusCode, 401);
  });

  it('resets a password: temporary, sessions ended, FORCE_CHANGE_PASSWORD', async () => {
    const { app, token: admin } = await customerSession(h);
    const member = await userWithRole(app, admin, 'r@alpha.test', 'MEMBER');
    const reset = await app.inject({
      method: 'POST',
      url: `/v1/users/${member.id}/reset-password`,
      headers: bearer(admin),
    });
    assert.equal(reset.statusCode, 200);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(member.token) })).statusCode,
      401,
    );
    const login = json(
      await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: 'r@alpha.test', password: json(reset).temporary_password },
      }),
    );
    assert.equal(login.challenge.name, 'NEW_PASSWORD_REQUIRED');
    const audit = JSON.stringify(await auditActions(app, admin));
    assert.match(audit, /user\.password_reset/);
    assert.ok(!audit.includes(json(reset).temporary_password));
  });
});

describe('forgotten password by mail', () => {
  it('takes only an smtp:// or smtps:// SMTP_URL', () => {
    assert.equal(
      loadConfig({ SMTP_URL: 'smtps://u:p@mail.alpha.test:465' }).smtpUrl,
      'smtps://u:p@mail.alpha.test:465',
    );
    assert.throws(
      () => loadConfig({ SMTP_URL: 'http://mail.alpha.test' }),
      /SMTP_URL must start with smtp:\/\/ or smtps:\/\//,
    );
    assert.throws(() => loadConfig({ SMTP_URL: 'not a url' }), /SMTP_URL must be a URL/);
  });

  it('answers 202 alike, mails a code through SMTP (after the server comes back), and the code sets a new password once', async () => {
    const received: string[] = [];
    const server = smtpServer(received);
    // The port is taken first, then the server is closed: the mail must wait for it to come back.
    server.listen(0, '127.0.0.1');
    await once(server.server, 'listening');
    const port = (server.server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const { app, token: admin } = await customerSession(h, {
      smtpUrl: `smtp://127.0.0.1:${port}`,
      smtpFrom: 'feegate <noreply@alpha.test>',
    });
    await userWithRole(app, admin, 'forgot@alpha.test', 'MEMBER');
    const key = await issueKey(app, {
      user: 'ci@alpha.test',
      customerId: (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(admin) })).json().customer_id,
    });
    assert.ok(key);
    const gone = await userWithRole(app, admin, 'gone@alpha.test', 'MEMBER');
    await app.inject({
      method: 'PATCH',
      url: `/v1/users/${gone.id}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    for (const user of ['forgot@alpha.test', 'nobody@alpha.test', 'ci@alpha.test', 'gone@alpha.test']) {
      const res = await app.inject({ method: 'POST', url: '/v1/login/forgot-password', payload: { user } });
      assert.equal(res.statusCode, 202);
      assert.equal(res.body, '');
    }
    await app.services.users.stop();
    const restarted = smtpServer(received);
    restarted.listen(port, '127.0.0.1');
    await once(restarted.server, 'listening');
    try {
      // Sent mail is deleted once the server took it: an empty outbox means every mail has arrived.
      const outboxEmpty = async () => (await h.db.current.database.db.select().from(mailOutbox)).length === 0;
      await waitFor(outboxEmpty, 'every mail in the outbox was sent', { timeoutMs: 30_000, intervalMs: 100 });
      // The temporary passwords of the two new users, then one code: nothing for unknown, integration or disabled users.
      assert.equal(received.length, 3);
      const codeMails = received.filter((m) => /reset code/.test(m));
      assert.equal(codeMails.length, 1);
      assert.match(codeMails[0]!, /forgot@alpha\.test/);
      const code = /\n(\d{6})\r?\n/.exec(codeMails[0]!)?.[1];
      assert.ok(code, codeMails[0]);
      const wrong = await app.inject({
        method: 'POST',
        url: '/v1/login/confirm-forgot-password',
        payload: {
          user: 'forgot@alpha.test',
          code: code === '000000' ? '111111' : '000000',
          new_password: 'a quiet violet harbour at noon',
        },
      });
      assert.equal(json(wrong).code, 'invalid_code');
      const ok = await app.inject({
        method: 'POST',
        url: '/v1/login/confirm-forgot-password',
        payload: { user: 'forgot@alpha.test', code, new_password: 'a quiet violet harbour at noon' },
      });
      assert.equal(ok.statusCode, 204, ok.body);
      const spent = await app.inject({
        method: 'POST',
        url: '/v1/login/confirm-forgot-password',
        payload: { user: 'forgot@alpha.test', code, new_password: 'yet another quiet violet harbour' },
      });
      assert.equal(json(spent).code, 'invalid_code');
      await loginAs(app, { user: 'forgot@alpha.test', password: 'a quiet violet harbour at noon' });
    } finally {
      await new Promise<void>((resolve) => restarted.close(() => resolve()));
    }
  });
});

void uuid;
