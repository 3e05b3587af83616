/**
 * Sessions end: a login's refresh tokens live at most SESSION_MAX_AGE_SECONDS
 * from the login, and POST /v1/logout/all ends every login of a user on every
 * instance.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { auditEvents, authSessions } from '../../src/db/schema.js';
import { bearer, json, secondInstance, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const DAY = 86_400;

const me = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
const refresh = (app: FastifyInstance, refreshToken: string) =>
  app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: refreshToken } });
const logoutAll = (app: FastifyInstance, headers: Record<string, string>) =>
  app.inject({ method: 'POST', url: '/v1/logout/all', headers });

/** Moves a login's start `seconds` into the past, as if it had been made that long ago. */
async function age(accessToken: string, seconds: number) {
  const sid = String(decodeJwt(accessToken).sid);
  await h.db.current.database.db
    .update(authSessions)
    .set({ createdAt: sql`${authSessions.createdAt} - make_interval(secs => ${seconds})` })
    .where(eq(authSessions.id, sid));
}

function assert401(res: Awaited<ReturnType<typeof me>>, code: string) {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(json(res).code, code);
}

describe('sessions end: SESSION_MAX_AGE_SECONDS', () => {
  it('refreshing never carries a login past 30 days from the login', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const first = await loginAs(app, world.login);
    await age(first.access_token, 30 * DAY - 600);
    const res = await refresh(app, first.refresh_token);
    assert.equal(res.statusCode, 200, res.body);
    const { token } = json(res);
    assert.ok(
      token.refresh_expires_in > 0 && token.refresh_expires_in <= 600,
      `refresh_expires_in ${token.refresh_expires_in}, not 30 more days`,
    );
    await age(first.access_token, 601);
    assert401(await refresh(app, token.refresh_token), 'invalid_refresh_token');
    assert.ok((await loginAs(app, world.login)).refresh_token, 'logging in again starts a new login');
  });

  it('takes the limit from the configuration, also for the first refresh token', async () => {
    const app = await h.app({ sessionMaxAgeSeconds: 3600, refreshTokenTtlSeconds: 7200 });
    const world = await seedWorld(app);
    const first = json(await app.inject({ method: 'POST', url: '/v1/login', payload: world.login })).token;
    assert.equal(first.refresh_expires_in, 3600);
    const second = json(await refresh(app, first.refresh_token)).token;
    assert.ok(
      second.refresh_expires_in <= 3600 && second.refresh_expires_in >= 3590,
      String(second.refresh_expires_in),
    );
    await age(first.access_token, 3600);
    assert401(await refresh(app, second.refresh_token), 'invalid_refresh_token');
  });
});

describe('POST /v1/logout/all', () => {
  it("answers 204 and ends every login of the caller's user, and only those", async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const phone = await loginAs(app, world.login);
    const laptop = await loginAs(app, world.login);
    const other = await loginAs(app, world.otherLogin);
    const res = await logoutAll(app, bearer(phone.access_token) as Record<string, string>);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    for (const token of [phone, laptop]) {
      assert401(await me(app, token.access_token), 'invalid_token');
      assert401(await refresh(app, token.refresh_token), 'invalid_refresh_token');
    }
    assert.equal((await me(app, other.access_token)).statusCode, 200);
    const later = await loginAs(app, world.login);
    assert.equal((await me(app, later.access_token)).statusCode, 200, 'a new login works');
    const [event] = await h.db.current.database.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, 'auth.logout_all'), eq(auditEvents.customerId, world.customerId)));
    assert.deepEqual(event!.details, { sessions: 2 });
  });

  it('ends them on every instance', async () => {
    const app = await h.app();
    const second = await secondInstance(h);
    try {
      const world = await seedWorld(app);
      const phone = await loginAs(app, world.login);
      const laptop = await loginAs(second, world.login);
      assert.equal((await me(second, laptop.access_token)).statusCode, 200);
      assert.equal((await logoutAll(app, bearer(phone.access_token) as Record<string, string>)).statusCode, 204);
      await waitFor(
        async () => (await me(second, laptop.access_token)).statusCode === 401,
        'the other instance refused the token',
        { timeoutMs: 1000 },
      );
      assert401(await refresh(second, laptop.refresh_token), 'invalid_refresh_token');
    } finally {
      await second.close();
    }
  });

  it('refuses an API key with 403 and ends nothing; no credentials: 401', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const key = await issueKey(app, { user: world.login.user, customerId: world.customerId });
    const res = await logoutAll(app, { 'x-api-key': key.api_key });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(json(res).code, 'forbidden');
    assert.equal((await me(app, token.access_token)).statusCode, 200);
    assert401(await logoutAll(app, {}), 'missing_credentials');
    const revoked = await h.db.current.database.db
      .select()
      .from(authSessions)
      .where(sql`${authSessions.revokedAt} IS NOT NULL`);
    assert.equal(revoked.length, 0);
  });
});
