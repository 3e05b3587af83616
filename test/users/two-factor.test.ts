/** Back-office users' two-factor codes (TOTP): enrolment, the login challenge, recovery codes, guesses bounded by the lockout. */
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { sql } from 'drizzle-orm';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { enableTotp, startTotp } from '../helpers/mfa.js';
import { customerSession } from '../helpers/fixtures.js';
import { auditActions, createUser, STRONG, userWithRole } from '../helpers/users.js';

const h = useTestApp();
/** The password of seedWorld's login (the ADMIN of these tests). */
const ADMIN_PASSWORD = 'alpha-password-1';

describe('two-factor codes (TOTP)', () => {
  it('enrols, challenges the login with SOFTWARE_TOKEN_MFA, refuses a replayed code, takes a recovery code once', async () => {
    const { app, token: admin, world } = await customerSession(h);
    const start = json(
      await app.inject({
        method: 'POST',
        url: '/v1/users/me/mfa/totp',
        headers: bearer(admin),
        payload: { current_password: ADMIN_PASSWORD },
      }),
    );
    assert.match(start.otpauth_url, /^otpauth:\/\/totp\//);
    const wrong = await app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: bearer(admin),
      payload: { code: '000000' === totpCode(start.secret) ? '111111' : '000000' },
    });
    assert.equal(json(wrong).code, 'invalid_code');
    const code = totpCode(start.secret);
    const verified = await app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: bearer(admin),
      payload: { code },
    });
    assert.equal(verified.statusCode, 200, verified.body);
    const recovery: string[] = json(verified).recovery_codes;
    assert.equal(recovery.length, 10);
    const challenged = async () =>
      json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login })).challenge;
    const first = await challenged();
    assert.equal(first.name, 'SOFTWARE_TOKEN_MFA');
    const replay = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'SOFTWARE_TOKEN_MFA', session: first.session, code },
    });
    assert.equal(replay.statusCode, 401, 'the code verified at enrolment is spent');
    assert.equal(json(replay).code, 'invalid_challenge');
    const second = await challenged();
    const withRecovery = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'SOFTWARE_TOKEN_MFA', session: second.session, code: recovery[0] },
    });
    assert.equal(withRecovery.statusCode, 200, withRecovery.body);
    const third = await challenged();
    const recoveryAgain = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'SOFTWARE_TOKEN_MFA', session: third.session, code: recovery[0] },
    });
    assert.equal(recoveryAgain.statusCode, 401);
    const audit = JSON.stringify(await auditActions(app, admin));
    assert.match(audit, /user\.mfa_enabled/);
    assert.ok(!audit.includes(start.secret) && !audit.includes(recovery[1]!));
  });

  it('adds no second password hash to a login: the code is checked without argon2', async () => {
    const { app, token: admin, world } = await customerSession(h);
    const { secret } = await enableTotp(app, admin, ADMIN_PASSWORD);
    const verify = mock.method(app.services.hasher, 'verify');
    const hash = mock.method(app.services.hasher, 'hash');
    const login = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login }));
    assert.equal(login.challenge.name, 'SOFTWARE_TOKEN_MFA');
    // The next step's code: the enrolment spent this one.
    const code = totpCode(secret, Date.now() + 30_000);
    const answered = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'SOFTWARE_TOKEN_MFA', session: login.challenge.session, code },
    });
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal(verify.mock.callCount(), 1, 'the password is verified once, at POST /v1/login');
    assert.equal(hash.mock.callCount(), 0, 'nothing is hashed with argon2 for the code');
  });

  it('never checks more parallel code guesses than the lockout allows', async () => {
    const { app, token: admin } = await customerSession(h, { loginMaxFailures: 3 });
    const secret = await startTotp(app, admin, ADMIN_PASSWORD);
    const wrong = totpCode(secret) === '000000' ? '111111' : '000000';
    const guesses = await Promise.all(
      Array.from({ length: 8 }, () =>
        app.inject({
          method: 'POST',
          url: '/v1/users/me/mfa/totp/verify',
          headers: bearer(admin),
          payload: { code: wrong },
        }),
      ),
    );
    const statuses = guesses.map((g) => g.statusCode);
    assert.equal(statuses.filter((s) => s === 400).length, 3, String(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 5, String(statuses));
  });

  it('refuses an expired challenge session', async () => {
    const { app, token: admin } = await customerSession(h);
    const created = await createUser(app, admin, { email: 'late@alpha.test' });
    const login = json(
      await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: 'late@alpha.test', password: created.temporary_password },
      }),
    );
    await h.db.current.database.db.execute(sql`UPDATE login_challenges SET expires_at = now() - interval '1 second'`);
    const late = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'NEW_PASSWORD_REQUIRED', session: login.challenge.session, new_password: STRONG },
    });
    assert.equal(late.statusCode, 401);
    assert.equal(json(late).code, 'invalid_challenge');
    const listed = json(
      await app.inject({ method: 'GET', url: '/v1/users?email=late@alpha.test', headers: bearer(admin) }),
    );
    assert.equal(listed.users[0].status, 'FORCE_CHANGE_PASSWORD', 'nothing changed');
  });

  it('counts wrong codes toward the login lockout', async () => {
    const { app, token: admin, world } = await customerSession(h, { loginMaxFailures: 2 });
    await enableTotp(app, admin, ADMIN_PASSWORD);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const login = await app.inject({ method: 'POST', url: '/v1/login', payload: world.login });
      if (login.statusCode !== 200) {
        statuses.push(login.statusCode);
        continue;
      }
      const res = await app.inject({
        method: 'POST',
        url: '/v1/login/challenge',
        payload: { name: 'SOFTWARE_TOKEN_MFA', session: json(login).challenge.session, code: 'nope00' },
      });
      statuses.push(res.statusCode);
    }
    assert.ok(statuses.includes(429), String(statuses));
  });

  it('requires TOTP of every login when the customer says so (MFA_SETUP)', async () => {
    const { app, token: admin } = await customerSession(h);
    const member = await userWithRole(app, admin, 'mfa@alpha.test', 'MEMBER');
    const setting = await app.inject({
      method: 'PATCH',
      url: '/v1/customers/me',
      headers: bearer(admin),
      payload: { require_mfa: true },
    });
    assert.equal(json(setting).require_mfa, true);
    const login = json(
      await app.inject({ method: 'POST', url: '/v1/login', payload: { user: 'mfa@alpha.test', password: STRONG } }),
    );
    assert.equal(login.challenge.name, 'MFA_SETUP');
    // The session stands in for an access token on the enrolment operations only.
    const session = bearer(login.challenge.session);
    const elsewhere = await app.inject({ method: 'GET', url: '/v1/users', headers: session });
    assert.equal(elsewhere.statusCode, 401);
    const start = json(
      await app.inject({
        method: 'POST',
        url: '/v1/users/me/mfa/totp',
        headers: session,
        payload: { current_password: STRONG },
      }),
    );
    assert.match(start.otpauth_url, /mfa%40alpha\.test/);
    const res = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'MFA_SETUP', session: login.challenge.session, code: totpCode(start.secret) },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).recovery_codes.length, 10);
    const spent = await app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp',
      headers: session,
      payload: { current_password: STRONG },
    });
    assert.equal(spent.statusCode, 401);
    assert.equal(member.id.length, 36);
  });
});
