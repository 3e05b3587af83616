/** Back-office users: roles in tokens, the ADMIN's operations, first login, own password, TOTP, forgotten password by mail. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it, mock } from 'node:test';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../../src/config.js';
import { domainEvents, mailOutbox } from '../../src/db/schema.js';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld, uuid } from '../helpers/fixtures.js';
import { createUser, STRONG, smtpServer, userWithRole } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
/** The password of seedWorld's login (the ADMIN of these tests). */
const ADMIN_PASSWORD = 'alpha-password-1';

async function setup(overrides = {}) {
  const app = await h.app(overrides);
  const world = await seedWorld(app);
  const admin = (await loginAs(app, world.login)).access_token;
  return { app, world, admin };
}

type App = Awaited<ReturnType<typeof setup>>['app'];

async function auditActions(app: App, token: string) {
  const res = await app.inject({ method: 'GET', url: '/v1/audit-events?size=1000', headers: bearer(token) });
  return json(res);
}

describe('roles', () => {
  it('carries the role in the access token; existing and imported users are ADMIN', async () => {
    const { admin } = await setup();
    const claims = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.role, 'ADMIN');
  });

  it('lets a VIEWER read but refuses every write with 403 insufficient_role, and writes nothing', async () => {
    const { app, world, admin } = await setup();
    const viewer = await userWithRole(app, admin, 'viewer@alpha.test', 'VIEWER');
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/api-keys', headers: bearer(viewer.token) })).statusCode,
      200,
    );
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(viewer.token) })).statusCode,
      200,
    );
    const writes = [
      { method: 'POST', url: '/v1/api-keys', payload: { user: 'ci@alpha.test', customer_id: world.customerId } },
      {
        method: 'POST',
        url: '/v1/fee-rules/bulk-assign',
        payload: { merchant_ids: world.merchantIds, payment_plan_ids: [] },
      },
      { method: 'POST', url: '/v1/users', payload: { email: 'x@alpha.test' } },
      { method: 'PATCH', url: `/v1/users/${viewer.id}`, payload: { role: 'ADMIN' } },
      { method: 'POST', url: `/v1/users/${viewer.id}/reset-password` },
      { method: 'PATCH', url: '/v1/customers/me', payload: { require_mfa: true } },
    ] as const;
    for (const write of writes) {
      const res = await app.inject({ ...write, headers: bearer(viewer.token) });
      assert.equal(res.statusCode, 403, `${write.method} ${write.url}: ${res.body}`);
      assert.equal(json(res).code, 'insufficient_role');
    }
    const listed = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(admin) }));
    assert.equal(listed.metadata.total_elements, 2);
    const listedViewer = (listed.users as Array<{ attributes: { id: string; role: string } }>).find(
      (u) => u.attributes.id === viewer.id,
    );
    assert.equal(listedViewer?.attributes.role, 'VIEWER');
    // A VIEWER still changes its own password and logs out.
    const own = await app.inject({
      method: 'POST',
      url: '/v1/users/me/password',
      headers: bearer(viewer.token),
      payload: { current_password: STRONG, new_password: 'a quiet violet harbour at noon' },
    });
    assert.equal(own.statusCode, 204, own.body);
    assert.equal(
      (await app.inject({ method: 'POST', url: '/v1/logout', headers: bearer(viewer.token) })).statusCode,
      204,
    );
  });

  it('lets a MEMBER work but not manage users; API keys never manage users', async () => {
    const { app, world, admin } = await setup();
    const member = await userWithRole(app, admin, 'member@alpha.test', 'MEMBER');
    const key = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(member.token),
      payload: { user: 'ci@alpha.test', customer_id: world.customerId },
    });
    assert.equal(key.statusCode, 201, key.body);
    const refused = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(member.token),
      payload: { email: 'y@alpha.test' },
    });
    assert.equal(json(refused).code, 'insufficient_role');
    const apiKey = json(key).api_key;
    for (const write of [
      { method: 'POST', url: '/v1/users', payload: { email: 'z@alpha.test' } },
      { method: 'PATCH', url: `/v1/users/${member.id}`, payload: { enabled: false } },
      { method: 'POST', url: `/v1/users/${member.id}/reset-password` },
    ] as const) {
      const res = await app.inject({ ...write, headers: { 'x-api-key': apiKey } });
      assert.equal(res.statusCode, 403);
      assert.equal(json(res).code, 'insufficient_role');
    }
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users', headers: { 'x-api-key': apiKey } })).statusCode,
      200,
    );
    const merchantKey = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const merchantList = await app.inject({
      method: 'GET',
      url: '/v1/users',
      headers: { 'x-api-key': merchantKey.api_key },
    });
    assert.equal(merchantList.statusCode, 403);
  });
});

describe('POST/GET/PATCH /v1/users', () => {
  it('creates a login user with a temporary password shown once, audited and emitted without secrets', async () => {
    const { app, world, admin } = await setup();
    const created = await createUser(app, admin, { email: 'Ana@Alpha.test', name: 'Ana', description: 'payments' });
    assert.equal(created.attributes.email, 'ana@alpha.test');
    assert.equal(created.attributes.role, 'MEMBER');
    assert.equal(created.attributes.scope, 'LOGIN');
    assert.deepEqual(created.attributes.customer_id, [world.customerId]);
    assert.equal(created.status, 'FORCE_CHANGE_PASSWORD');
    assert.equal(typeof created.temporary_password, 'string');
    const listed = json(
      await app.inject({ method: 'GET', url: '/v1/users?email=ANA@alpha.test', headers: bearer(admin) }),
    );
    assert.equal(listed.users.length, 1);
    assert.equal(listed.users[0].temporary_password, undefined);
    const conflict = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(admin),
      payload: { email: 'ana@alpha.test' },
    });
    assert.equal(conflict.statusCode, 409);
    assert.equal(json(conflict).code, 'user_conflict');
    const events = await h.db.current.database.db.select().from(domainEvents);
    assert.deepEqual(
      events.map((e) => e.type),
      ['USER_CREATED'],
    );
    const [event] = events;
    assert.ok(event);
    assert.equal((event.data as { attributes: { email: string } }).attributes.email, 'ana@alpha.test');
    assert.ok(!JSON.stringify(events[0]?.data).includes(created.temporary_password));
    const audit = JSON.stringify(await auditActions(app, admin));
    assert.match(audit, /user\.created/);
    assert.ok(!audit.includes(created.temporary_password));
  });

  it('refuses bad input with 400 naming the field and writes nothing', async () => {
    const { app, admin } = await setup();
    const bad = [
      { email: 'nul\u0000@alpha.test' },
      { email: 'a@alpha.test', name: 'x'.repeat(300) },
      { email: 'a@alpha.test', role: 'OWNER' },
      { email: 'a@alpha.test', name: 1e21 },
      { email: 'a@alpha.test', extra: true },
    ];
    for (const payload of bad) {
      const res = await app.inject({ method: 'POST', url: '/v1/users', headers: bearer(admin), payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    const listed = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(admin) }));
    assert.equal(listed.metadata.total_elements, 1);
  });

  it("answers 404 for another customer's user, upper-case ids work, and the last ADMIN is protected", async () => {
    const { app, world, admin } = await setup();
    const other = (await loginAs(app, world.otherLogin)).access_token;
    const otherList = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(other) }));
    const otherId = otherList.users[0].attributes.id;
    const cross = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${otherId}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    assert.equal(cross.statusCode, 404);
    assert.equal(json(cross).code, 'user_not_found');
    const reset = await app.inject({
      method: 'POST',
      url: `/v1/users/${otherId}/reset-password`,
      headers: bearer(admin),
    });
    assert.equal(reset.statusCode, 404);
    const mine = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(admin) })).users[0].attributes
      .id;
    const demote = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${mine.toUpperCase()}`,
      headers: bearer(admin),
      payload: { role: 'MEMBER' },
    });
    assert.equal(demote.statusCode, 409);
    assert.equal(json(demote).code, 'last_admin');
    const disable = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${mine}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    assert.equal(json(disable).code, 'last_admin');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(admin) })).statusCode, 200);
  });

  it('ends the sessions of a user whose role changes or who is disabled; a disabled user cannot log in', async () => {
    const { app, admin } = await setup();
    const member = await userWithRole(app, admin, 'member@alpha.test', 'MEMBER');
    const demoted = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${member.id}`,
      headers: bearer(admin),
      payload: { role: 'VIEWER', name: 'Mem' },
    });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.equal(json(demoted).attributes.role, 'VIEWER');
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(member.token) })).statusCode,
      401,
    );
    const again = (await loginAs(app, { user: 'member@alpha.test', password: STRONG })).access_token;
    const disabled = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${member.id}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    assert.equal(json(disabled).status, 'DISABLED');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(again) })).statusCode, 401);
    const login = await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: 'member@alpha.test', password: STRONG },
    });
    assert.equal(login.statusCode, 401);
    assert.equal(json(login).code, 'invalid_credentials');
    const audit = JSON.stringify(await auditActions(app, admin));
    assert.match(audit, /user\.disabled/);
    assert.match(audit, /user\.updated/);
  });

  it('disabling an integration user refuses its keys until it is enabled again', async () => {
    const { app, world, admin } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const headers = { 'x-api-key': key.api_key };
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers })).statusCode, 200);
    const list = json(
      await app.inject({ method: 'GET', url: '/v1/users?email=ci@alpha.test', headers: bearer(admin) }),
    );
    const id = list.users[0].attributes.id;
    assert.equal(list.users[0].attributes.scope, 'API_KEY');
    assert.equal(list.users[0].attributes.role, null);
    await app.inject({ method: 'PATCH', url: `/v1/users/${id}`, headers: bearer(admin), payload: { enabled: false } });
    const refused = await app.inject({ method: 'GET', url: '/v1/users/me', headers });
    assert.equal(refused.statusCode, 401);
    await app.inject({ method: 'PATCH', url: `/v1/users/${id}`, headers: bearer(admin), payload: { enabled: true } });
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers })).statusCode, 200);
  });
});

describe('first login and passwords', () => {
  it('answers NEW_PASSWORD_REQUIRED; a session is good once, for its user, and weak passwords are refused', async () => {
    const { app, admin } = await setup();
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
    const { app, admin } = await setup({ loginMaxFailures: 3 });
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
    const { app, admin } = await setup();
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

describe('two-factor codes (TOTP)', () => {
  it('enrols, challenges the login with SOFTWARE_TOKEN_MFA, refuses a replayed code, takes a recovery code once', async () => {
    const { app, admin, world } = await setup();
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
    const { app, admin, world } = await setup();
    const start = json(
      await app.inject({
        method: 'POST',
        url: '/v1/users/me/mfa/totp',
        headers: bearer(admin),
        payload: { current_password: ADMIN_PASSWORD },
      }),
    );
    const enrolled = await app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: bearer(admin),
      payload: { code: totpCode(start.secret) },
    });
    assert.equal(enrolled.statusCode, 200, enrolled.body);
    const verify = mock.method(app.services.hasher, 'verify');
    const hash = mock.method(app.services.hasher, 'hash');
    const login = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login }));
    assert.equal(login.challenge.name, 'SOFTWARE_TOKEN_MFA');
    // The next step's code: the enrolment spent this one.
    const code = totpCode(start.secret, Date.now() + 30_000);
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
    const { app, admin } = await setup({ loginMaxFailures: 3 });
    const start = json(
      await app.inject({
        method: 'POST',
        url: '/v1/users/me/mfa/totp',
        headers: bearer(admin),
        payload: { current_password: ADMIN_PASSWORD },
      }),
    );
    const wrong = totpCode(start.secret) === '000000' ? '111111' : '000000';
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
    const { app, admin } = await setup();
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
    const { app, admin, world } = await setup({ loginMaxFailures: 2 });
    const start = json(
      await app.inject({
        method: 'POST',
        url: '/v1/users/me/mfa/totp',
        headers: bearer(admin),
        payload: { current_password: ADMIN_PASSWORD },
      }),
    );
    await app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: bearer(admin),
      payload: { code: totpCode(start.secret) },
    });
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
    const { app, admin } = await setup();
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
    const { app, admin } = await setup({
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
