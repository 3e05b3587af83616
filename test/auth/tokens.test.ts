import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { auditEvents, authTokens } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';

const h = useTestApp();

async function me(headers: Record<string, string> | undefined) {
  const app = await h.app();
  return app.inject({ method: 'GET', url: '/v1/users/me', headers });
}

async function refresh(refreshToken: string) {
  const app = await h.app();
  return app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: refreshToken } });
}

function assert401(res: Awaited<ReturnType<typeof me>>, code?: string) {
  assert.equal(res.statusCode, 401, res.body);
  assert.ok(res.headers['www-authenticate'], 'WWW-Authenticate is set');
  if (code) assert.equal(json(res).code, code);
}

describe('GET /v1/users/me', () => {
  it('describes the token caller', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const res = await me(bearer(token.access_token) as Record<string, string>);
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.deepEqual(
      { ...body, id: typeof body.id },
      {
        id: 'string',
        user: world.login.user,
        user_type: 'CUSTOMER',
        customer_id: world.customerId,
        merchant_id: null,
        auth: 'token',
      },
    );
  });

  it('refuses missing, malformed and unknown credentials with 401 and WWW-Authenticate', async () => {
    assert401(await me(undefined), 'missing_credentials');
    assert401(await me({ authorization: 'Basic dXNlcjpwYXNz' }), 'invalid_token');
    assert401(await me({ authorization: 'Bearer' }), 'invalid_token');
    assert401(await me({ authorization: 'Bearer fga_unknown' }), 'invalid_token');
  });

  it('refuses a request carrying both credential headers with 400 ambiguous_credentials', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const both = { authorization: `Bearer ${token.access_token}`, 'x-api-key': 'fgk_x' };
    const res = await me(both);
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).code, 'ambiguous_credentials');
    // Also where no caller is authenticated: a login, a refresh; nothing issued.
    const tokensBefore = (await h.db.current.database.db.select().from(authTokens)).length;
    for (const [url, payload] of [
      ['/v1/login', world.login],
      ['/v1/login/refresh', { refresh_token: token.refresh_token }],
    ] as const) {
      const refused = await app.inject({ method: 'POST', url, headers: both, payload });
      assert.equal(refused.statusCode, 400, `${url}: ${refused.body}`);
      assert.equal(json(refused).code, 'ambiguous_credentials', url);
    }
    assert.equal((await h.db.current.database.db.select().from(authTokens)).length, tokensBefore, 'no token issued');
  });
});

describe('token expiry', () => {
  it('refuses an access token after expires_in seconds', async () => {
    // 3 s, not 1: iat and exp are whole seconds, so a token lives between 2 and 3 s; a 1 s token
    // issued late in a second could expire before a loaded machine had asked once.
    const app = await h.app({ accessTokenTtlSeconds: 3 });
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    assert.equal(token.expires_in, 3);
    assert.equal((await me(bearer(token.access_token) as Record<string, string>)).statusCode, 200);
    await sleep(3100);
    assert401(await me(bearer(token.access_token) as Record<string, string>), 'invalid_token');
  });

  it('refuses an expired refresh token', async () => {
    const app = await h.app({ refreshTokenTtlSeconds: 1 });
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    await sleep(1100);
    assert401(await refresh(token.refresh_token), 'invalid_refresh_token');
  });
});

describe('expired token housekeeping', () => {
  it('prunes expired refresh tokens and keeps live ones', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    await loginAs(app, world.login);
    // Expired by the database clock, not by a wait: a loaded machine's second login may outlast a short TTL.
    await h.db.current.database.db.update(authTokens).set({ expiresAt: sql`now() - interval '1 second'` });
    const live = await loginAs(app, world.login);
    assert.equal(await app.services.auth.pruneExpiredTokens(), 1, 'the expired refresh token');
    const rows = await h.db.current.database.db.select().from(authTokens);
    assert.equal(rows.length, 1, 'the live refresh token stays; access tokens are not stored');
    assert.equal((await refresh(live.refresh_token)).statusCode, 200);
  });
});

describe('POST /v1/login/refresh', () => {
  it('rotates: a new token object whose access token works, with no-store', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const first = await loginAs(app, world.login);
    const res = await refresh(first.refresh_token);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const { token } = json(res);
    assert.notEqual(token.access_token, first.access_token);
    assert.notEqual(token.refresh_token, first.refresh_token);
    assert.equal(token.token_type, 'Bearer');
    assert.equal((await me(bearer(token.access_token) as Record<string, string>)).statusCode, 200);
  });

  it('treats a second use of a refresh token as theft: 401 and the whole family is revoked', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const first = await loginAs(app, world.login);
    const second = json(await refresh(first.refresh_token)).token;
    const third = json(await refresh(second.refresh_token)).token;
    assert401(await refresh(first.refresh_token), 'refresh_token_reused');
    // Every token descended from that login stops working, including the newest.
    assert401(await me(bearer(third.access_token) as Record<string, string>), 'invalid_token');
    assert401(await me(bearer(first.access_token) as Record<string, string>), 'invalid_token');
    assert401(await refresh(third.refresh_token), 'invalid_refresh_token');
    const audit = await h.db.current.database.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'auth.refresh_reuse_detected'));
    assert.equal(audit.length, 1);
  });

  it('leaves other logins of the same user alone when one family is revoked', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const stolen = await loginAs(app, world.login);
    const other = await loginAs(app, world.login);
    await refresh(stolen.refresh_token);
    await refresh(stolen.refresh_token);
    assert.equal((await me(bearer(other.access_token) as Record<string, string>)).statusCode, 200);
  });

  it('refuses an unknown refresh token, an access token in its place, and a bad body', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    assert401(await refresh('fgr_unknown'), 'invalid_refresh_token');
    assert401(await refresh(token.access_token), 'invalid_refresh_token');
    const bad = await app.inject({ method: 'POST', url: '/v1/login/refresh', payload: {} });
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).errors[0].field, 'refresh_token');
  });

  it('lets only one of two concurrent uses of a refresh token win', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const results = await Promise.all([refresh(token.refresh_token), refresh(token.refresh_token)]);
    const statuses = results.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 401]);
  });
});

describe('POST /v1/logout', () => {
  it('answers 204 and stops the access token and its refresh family', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const res = await app.inject({ method: 'POST', url: '/v1/logout', headers: bearer(token.access_token) });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert401(await me(bearer(token.access_token) as Record<string, string>), 'invalid_token');
    assert401(await refresh(token.refresh_token), 'invalid_refresh_token');
  });

  it('needs credentials', async () => {
    const app = await h.app();
    const res = await app.inject({ method: 'POST', url: '/v1/logout' });
    assert401(res, 'missing_credentials');
  });
});
