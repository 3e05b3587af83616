/**
 * Step-up for two-factor codes (contract section 19): enrolling and turning TOTP
 * off take the current password (401 invalid_credentials otherwise, a failed
 * login); turning it on or off ends the user's other logins on every instance;
 * access tokens carry `amr`, kept by refreshes; while a customer requires
 * two-factor codes, logins made without one are refused with 401 mfa_required
 * (access and refresh tokens, on every instance, from memory), API keys are not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { auditEvents, authSessions, users } from '../../src/db/schema.js';
import { createAuthDal } from '../../src/features/auth/auth-dal.js';
import { createMfaRequirements } from '../../src/features/auth/mfa-requirements.js';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json, secondInstance, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld, type World } from '../helpers/fixtures.js';
import { enableTotp } from '../helpers/mfa.js';
import { testSealedValues } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

type Tokens = Awaited<ReturnType<typeof loginAs>>;

const me = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
const refresh = (app: FastifyInstance, refreshToken: string) =>
  app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: refreshToken } });
const enrol = (app: FastifyInstance, token: string, payload?: Record<string, unknown>) =>
  app.inject({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(token), ...(payload ? { payload } : {}) });
const turnOff = (app: FastifyInstance, token: string, payload: Record<string, unknown>) =>
  app.inject({ method: 'DELETE', url: '/v1/users/me/mfa/totp', headers: bearer(token), payload });

function assert401(res: Awaited<ReturnType<typeof me>>, code: string) {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(json(res).code, code);
}

async function totpRow(email: string) {
  const [row] = await h.db.current.database.db
    .select({ secret: users.totpSecret, enabled: users.totpEnabled })
    .from(users)
    .where(eq(users.email, email));
  return row!;
}

async function failedLogins(customerId: string) {
  const rows = await h.db.current.database.db
    .select()
    .from(auditEvents)
    .where(sql`${auditEvents.action} = 'auth.login_failed' AND ${auditEvents.customerId} = ${customerId}`);
  return rows.length;
}

/** Turns TOTP on for the login of `tokens` (spending the code of now); answers its secret and recovery codes. */
async function turnOn(app: FastifyInstance, world: World, tokens: Tokens) {
  const { secret, recoveryCodes } = await enableTotp(app, tokens.access_token, world.login.password);
  return { secret, recovery: recoveryCodes };
}

/** A login answered with a two-factor code (by default the next step's, the enrolment spent this one): its tokens. */
async function loginWithCode(app: FastifyInstance, world: World, code: string) {
  const login = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login }));
  assert.equal(login.challenge?.name, 'SOFTWARE_TOKEN_MFA', JSON.stringify(login));
  const answered = await app.inject({
    method: 'POST',
    url: '/v1/login/challenge',
    payload: { name: 'SOFTWARE_TOKEN_MFA', session: login.challenge.session, code },
  });
  assert.equal(answered.statusCode, 200, answered.body);
  return json(answered).token as Tokens;
}

const nextCode = (secret: string) => totpCode(secret, Date.now() + 30_000);

const requireMfa = (app: FastifyInstance, token: string, on: boolean) =>
  app.inject({ method: 'PATCH', url: '/v1/customers/me', headers: bearer(token), payload: { require_mfa: on } });

describe('step-up: the current password to enrol and to turn TOTP off', () => {
  it('refuses an enrolment without or with a wrong current password: 401, a failed login, no secret stored', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const { access_token } = await loginAs(app, world.login);
    for (const payload of [undefined, {}, { current_password: 'not-the-password' }]) {
      assert401(await enrol(app, access_token, payload), 'invalid_credentials');
    }
    assert.equal((await totpRow(world.login.user)).secret, null, 'no pending secret');
    await waitFor(async () => (await failedLogins(world.customerId)) === 3, 'three failed logins recorded');
    const ok = await enrol(app, access_token, { current_password: world.login.password });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.headers['cache-control'], 'no-store');
    assert.equal((await totpRow(world.login.user)).secret !== null, true);
  });

  it('counts wrong current passwords toward the login lockout', async () => {
    const app = await h.app({ loginMaxFailures: 2 });
    const world = await seedWorld(app);
    const { access_token } = await loginAs(app, world.login);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await enrol(app, access_token, { current_password: 'wrong' })).statusCode);
    assert.deepEqual(statuses, [401, 401, 429]);
    const login = await app.inject({ method: 'POST', url: '/v1/login', payload: world.login });
    assert.equal(login.statusCode, 429, 'the user name and address are locked for logins too');
  });

  it('takes the current password with the session of an MFA_SETUP challenge too', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const admin = await loginAs(app, world.login);
    assert.equal((await requireMfa(app, admin.access_token, true)).statusCode, 200);
    const login = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login }));
    assert.equal(login.challenge.name, 'MFA_SETUP');
    assert401(await enrol(app, login.challenge.session, {}), 'invalid_credentials');
    const ok = await enrol(app, login.challenge.session, { current_password: world.login.password });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  it('turns TOTP off only with the current password and a code; a refusal changes nothing', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const tokens = await loginAs(app, world.login);
    const { secret } = await turnOn(app, world, tokens);
    const code = nextCode(secret);
    assert401(await turnOff(app, tokens.access_token, { code }), 'invalid_credentials');
    assert401(await turnOff(app, tokens.access_token, { code, current_password: 'wrong' }), 'invalid_credentials');
    const wrongCode = code === '000000' ? '111111' : '000000';
    const badCode = await turnOff(app, tokens.access_token, {
      code: wrongCode,
      current_password: world.login.password,
    });
    assert.equal(badCode.statusCode, 400, badCode.body);
    assert.equal(json(badCode).code, 'invalid_code');
    assert.equal((await totpRow(world.login.user)).enabled, true, 'still on');
    await waitFor(async () => (await failedLogins(world.customerId)) >= 2, 'the wrong passwords are failed logins');
    const off = await turnOff(app, tokens.access_token, { code, current_password: world.login.password });
    assert.equal(off.statusCode, 204, off.body);
    assert.equal((await totpRow(world.login.user)).enabled, false);
  });
});

describe('turning TOTP on or off ends the other logins of the user, on every instance', () => {
  it('keeps the caller’s login and ends the others, here and on a second instance', async () => {
    const app = await h.app();
    const second = await secondInstance(h);
    try {
      const world = await seedWorld(app);
      const here = await loginAs(app, world.login);
      const there = await loginAs(second, world.login);
      const otherUser = await loginAs(app, world.otherLogin);
      assert.equal((await me(second, there.access_token)).statusCode, 200);
      const { recovery } = await turnOn(app, world, here);
      assert.equal((await me(app, here.access_token)).statusCode, 200, 'the enrolling login goes on');
      await waitFor(
        async () => (await me(second, there.access_token)).statusCode === 401,
        'the other instance refused the other login',
        { timeoutMs: 2000 },
      );
      assert401(await refresh(second, there.refresh_token), 'invalid_refresh_token');
      assert.equal((await me(app, otherUser.access_token)).statusCode, 200, 'another user is untouched');

      const withCode = await loginWithCode(second, world, recovery[0]!);
      const another = await loginWithCode(second, world, recovery[1]!);
      const off = await turnOff(second, withCode.access_token, {
        code: recovery[2]!,
        current_password: world.login.password,
      });
      assert.equal(off.statusCode, 204, off.body);
      assert.equal((await me(second, withCode.access_token)).statusCode, 200, 'the caller goes on');
      await waitFor(
        async () => (await me(app, another.access_token)).statusCode === 401,
        'the first instance refused the other login',
        { timeoutMs: 2000 },
      );
      assert401(await me(app, here.access_token), 'invalid_token');
    } finally {
      await second.close();
    }
  });

  it('ends every login of the user when MFA_SETUP turns it on', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const admin = await loginAs(app, world.login);
    const earlier = await loginAs(app, world.login);
    // As a login made with a code before the user turned TOTP off: require_mfa leaves it alone.
    await h.db.current.database.db
      .update(authSessions)
      .set({ amr: ['pwd', 'otp'] })
      .where(eq(authSessions.id, String(decodeJwt(earlier.access_token).sid)));
    const other = json(await refresh(app, earlier.refresh_token)).token as Tokens;
    assert.equal((await requireMfa(app, admin.access_token, true)).statusCode, 200);
    assert.equal((await me(app, other.access_token)).statusCode, 200);
    const login = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login }));
    const { secret } = json(await enrol(app, login.challenge.session, { current_password: world.login.password }));
    const done = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'MFA_SETUP', session: login.challenge.session, code: totpCode(secret) },
    });
    assert.equal(done.statusCode, 200, done.body);
    const fresh = json(done).token as Tokens;
    assert.equal((await me(app, fresh.access_token)).statusCode, 200);
    assert.deepEqual(decodeJwt(fresh.access_token).amr, ['pwd', 'otp']);
    const [ended] = await h.db.current.database.db
      .select({ reason: authSessions.revokedReason })
      .from(authSessions)
      .where(eq(authSessions.id, String(decodeJwt(other.access_token).sid)));
    assert.equal(ended?.reason, 'mfa_enabled');
    assert401(await me(app, other.access_token), 'invalid_token');
  });
});

describe('amr', () => {
  it('is ["pwd"] for a password login, ["pwd","otp"] with a code, and kept by refreshes', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const plain = await loginAs(app, world.login);
    assert.deepEqual(decodeJwt(plain.access_token).amr, ['pwd']);
    const refreshed = json(await refresh(app, plain.refresh_token)).token;
    assert.deepEqual(decodeJwt(refreshed.access_token).amr, ['pwd']);
    const { secret } = await turnOn(app, world, await loginAs(app, world.login));
    const withCode = await loginWithCode(app, world, nextCode(secret));
    assert.deepEqual(decodeJwt(withCode.access_token).amr, ['pwd', 'otp']);
    const again = json(await refresh(app, withCode.refresh_token)).token;
    assert.deepEqual(decodeJwt(again.access_token).amr, ['pwd', 'otp']);
  });

  it('counts a login of before the column as made with the password alone', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const tokens = await loginAs(app, world.login);
    // What migration 0017 gives every existing row: its default.
    await h.db.current.database.db.execute(sql`UPDATE auth_sessions SET amr = DEFAULT`);
    assert.deepEqual(decodeJwt(json(await refresh(app, tokens.refresh_token)).token.access_token).amr, ['pwd']);
  });
});

describe('require_mfa refuses logins made without a code', () => {
  it('ends them when turned on, refuses their access and refresh tokens with mfa_required on every instance; keys and logins with a code go on', async () => {
    const app = await h.app();
    const second = await secondInstance(h);
    try {
      const world = await seedWorld(app);
      const admin = await loginAs(app, world.login);
      const { secret } = await turnOn(app, world, admin);
      const withCode = await loginWithCode(app, world, nextCode(secret));
      const member = await app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: bearer(withCode.access_token),
        payload: { email: 'member@alpha.test', role: 'MEMBER' },
      });
      const temporary = json(member).temporary_password;
      const first = json(
        await app.inject({
          method: 'POST',
          url: '/v1/login',
          payload: { user: 'member@alpha.test', password: temporary },
        }),
      );
      const memberTokens = json(
        await app.inject({
          method: 'POST',
          url: '/v1/login/challenge',
          payload: {
            name: 'NEW_PASSWORD_REQUIRED',
            session: first.challenge.session,
            new_password: 'mauve tractor juggles seven owls',
          },
        }),
      ).token as Tokens;
      const other = await loginAs(app, world.otherLogin);
      const key = await issueKey(app, { user: world.login.user, customerId: world.customerId });
      assert.equal((await me(second, memberTokens.access_token)).statusCode, 200);

      const on = await requireMfa(app, withCode.access_token, true);
      assert.equal(on.statusCode, 200, on.body);
      assert401(await me(app, memberTokens.access_token), 'mfa_required');
      await waitFor(
        async () => (await me(second, memberTokens.access_token)).statusCode === 401,
        'the second instance refused the login without a code',
        { timeoutMs: 2000 },
      );
      assert401(await me(second, memberTokens.access_token), 'mfa_required');
      assert401(await refresh(second, memberTokens.refresh_token), 'mfa_required');
      assert.equal((await me(second, withCode.access_token)).statusCode, 200, 'a login with a code goes on');
      assert.equal((await refresh(app, withCode.refresh_token)).statusCode, 200);
      const keyed = await app.inject({ method: 'GET', url: '/v1/users/me', headers: { 'x-api-key': key.api_key } });
      assert.equal(keyed.statusCode, 200, 'API keys are not affected');
      assert.equal((await me(second, other.access_token)).statusCode, 200, 'another customer is not affected');

      const off = await requireMfa(second, withCode.access_token, false);
      assert.equal(off.statusCode, 200, off.body);
      const later = await loginAs(app, { user: 'member@alpha.test', password: 'mauve tractor juggles seven owls' });
      assert.equal((await me(second, later.access_token)).statusCode, 200, 'off again: a password login works');
      assert401(await me(app, memberTokens.access_token), 'invalid_token');
    } finally {
      await second.close();
    }
  });

  it('ends the caller’s own login when it was made without a code', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const admin = await loginAs(app, world.login);
    assert.equal((await requireMfa(app, admin.access_token, true)).statusCode, 200);
    assert401(await me(app, admin.access_token), 'mfa_required');
    assert401(await refresh(app, admin.refresh_token), 'mfa_required');
  });

  it('asks the database only while disconnected, and keeps a change heard during the load', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const dal = createAuthDal(h.db.current.database.db, testSealedValues());
    let reads = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const requirements = createMfaRequirements({
      loadRequiring: async () => {
        const ids = await dal.listCustomersRequiringMfa();
        await gate;
        return ids;
      },
      requiresInDatabase: (customerId) => {
        reads++;
        return dal.customerRequiresMfa(customerId);
      },
    });
    const admin = await loginAs(app, world.login);
    assert.equal((await requireMfa(app, admin.access_token, true)).statusCode, 200);
    assert.equal(await requirements.requires(world.customerId), true, 'disconnected: from the database');
    assert.equal(reads, 1);
    const loading = requirements.setConnected(true);
    // Heard while the load (which read before it) still runs: kept, not overwritten by the load.
    requirements.changed(world.otherCustomerId, true);
    requirements.changed(world.customerId, false);
    release();
    await loading;
    assert.equal(await requirements.requires(world.customerId), false);
    assert.equal(await requirements.requires(world.otherCustomerId), true);
    assert.equal(reads, 1, 'connected: no database read');
    await requirements.setConnected(false);
    assert.equal(await requirements.requires(world.customerId), true, 'disconnected again: the database says');
    assert.equal(reads, 2);
  });
});
