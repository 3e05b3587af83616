import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it, mock } from 'node:test';
import { eq } from 'drizzle-orm';
import { auditEvents, authTokens, users } from '../../src/db/schema.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, seedWorld, uuid } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

async function login(payload: unknown, headers: Record<string, string> = {}) {
  const app = await h.app();
  return app.inject({ method: 'POST', url: '/v1/login', payload: payload as object, headers });
}

/** Whether one more login would be queued rather than refused with 503. */
function canQueue(hasher: { assertCapacity(): void }): boolean {
  try {
    hasher.assertCapacity();
    return true;
  } catch {
    return false;
  }
}

const until = (condition: () => boolean, what: string) =>
  waitFor(condition, `timed out waiting for ${what}`, { intervalMs: 2 });

describe('POST /v1/login: happy', () => {
  it('answers 200 with the token object and no-store', async () => {
    const world = await seedWorld(await h.app());
    const res = await login(world.login);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const { token } = json(res);
    assert.deepEqual(Object.keys(token).sort(), [
      'access_token',
      'expires_in',
      'refresh_expires_in',
      'refresh_token',
      'token_type',
    ]);
    assert.equal(token.token_type, 'Bearer');
    assert.equal(token.expires_in, 3600);
    assert.equal(token.refresh_expires_in, 2592000);
    assert.match(token.access_token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a compact JWS');
    assert.match(token.refresh_token, /^fgr_[A-Za-z0-9_-]{43}$/);
  });

  it('takes the TTLs from the configuration', async () => {
    const app = await h.app({ accessTokenTtlSeconds: 120, refreshTokenTtlSeconds: 600 });
    const world = await seedWorld(app);
    const { token } = json(await login(world.login));
    assert.equal(token.expires_in, 120);
    assert.equal(token.refresh_expires_in, 600);
  });

  it('logs in its login user whatever integration users of other customers share the e-mail', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    // The other customer uses this customer's login e-mail for a key: an integration user of its own.
    await issueKey(app, {
      user: world.login.user,
      customerId: world.otherCustomerId,
      merchantId: world.otherMerchantIds[0]!,
    });
    const res = await login(world.login);
    assert.equal(res.statusCode, 200);
    const me = await app.inject({
      method: 'GET',
      url: '/v1/users/me',
      headers: { authorization: `Bearer ${json(res).token.access_token}` },
    });
    assert.equal(json(me).customer_id, world.customerId);
    assert.equal(json(me).user_type, 'CUSTOMER');
  });

  it('keeps login users unique by e-mail on the platform', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const insert = h.db.current.database.db.insert(users).values({
      email: world.login.user,
      type: 'CUSTOMER',
      customerId: world.otherCustomerId,
      passwordHash: 'x',
      role: 'ADMIN',
    });
    await assert.rejects(
      insert,
      (err: { cause?: { constraint?: string } }) => err.cause?.constraint === 'users_login_email_unique',
    );
  });

  it('matches the user name case-insensitively', async () => {
    const world = await seedWorld(await h.app());
    const res = await login({ user: world.login.user.toUpperCase(), password: world.login.password });
    assert.equal(res.statusCode, 200);
  });

  it('stores only the SHA-256 of the refresh token (the access token is a signed JWT, not stored), and audits the login', async () => {
    const world = await seedWorld(await h.app());
    const { token } = json(await login(world.login));
    const db = h.db.current.database.db;
    const rows = await db.select().from(authTokens);
    assert.deepEqual(
      rows.map((r) => r.tokenHash),
      [sha256Hex(token.refresh_token)],
    );
    assert.ok(!JSON.stringify(rows).includes(token.refresh_token));
    assert.ok(!JSON.stringify(rows).includes(token.access_token));
    const audits = await db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.login'));
    assert.equal(audits.length, 1);
    assert.equal(audits[0]!.actorType, 'user');
  });

  it('stores passwords as argon2id PHC strings with the OWASP parameters', async () => {
    const world = await seedWorld(await h.app());
    const [user] = await h.db.current.database.db.select().from(users).where(eq(users.email, world.login.user));
    assert.match(user!.passwordHash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});

describe('POST /v1/login: errors', () => {
  async function assertInvalidCredentials(res: Awaited<ReturnType<typeof login>>) {
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    assert.match(String(res.headers['www-authenticate']), /^Bearer /);
    const body = json(res);
    assert.equal(body.code, 'invalid_credentials');
    assert.equal(body.detail, 'The user or password is not correct.');
    return body;
  }

  it('gives the same 401 for a wrong password, an unknown user, a merchant user and a user without a password', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const db = h.db.current.database.db;
    const phc = await app.services.hasher.hash('merchant-password');
    await db.insert(users).values([
      {
        email: 'pos@alpha.test',
        type: 'MERCHANT',
        customerId: world.customerId,
        merchantId: world.merchantIds[0]!,
        passwordHash: phc,
        role: 'ADMIN',
      },
      { email: 'integration@alpha.test', type: 'CUSTOMER', customerId: world.customerId, passwordHash: null },
    ]);
    const bodies = [];
    bodies.push(await assertInvalidCredentials(await login({ user: world.login.user, password: 'wrong-password' })));
    bodies.push(await assertInvalidCredentials(await login({ user: 'nobody@alpha.test', password: 'whatever' })));
    bodies.push(await assertInvalidCredentials(await login({ user: 'pos@alpha.test', password: 'merchant-password' })));
    bodies.push(await assertInvalidCredentials(await login({ user: 'integration@alpha.test', password: 'anything' })));
    const strip = (b: Record<string, unknown>) => ({ ...b, request_id: undefined });
    for (const b of bodies) assert.deepEqual(strip(b), strip(bodies[0]!));
  });

  it('hashes even when the user is unknown, so failures take the same work', async () => {
    const app = await h.app();
    await seedWorld(app);
    const verify = mock.method(app.services.hasher, 'verify');
    await login({ user: 'nobody@alpha.test', password: 'whatever' });
    await login({ user: 'owner@alpha.test', password: 'wrong' });
    assert.equal(verify.mock.callCount(), 2);
    // Both were hashed: the unknown user against the dummy hash (its stored hash is null).
    assert.equal(await verify.mock.calls[0]!.arguments[0](), null);
    assert.match((await verify.mock.calls[1]!.arguments[0]()) ?? '', /^\$argon2id\$/);
    mock.restoreAll();
  });

  it('creates no session for a failed login', async () => {
    const world = await seedWorld(await h.app());
    await login({ user: world.login.user, password: 'wrong-password' });
    assert.equal((await h.db.current.database.db.select().from(authTokens)).length, 0);
  });

  const badBodies: Array<[string, unknown, string]> = [
    ['missing password', { user: 'a@b.test' }, 'password'],
    ['missing user', { password: 'x' }, 'user'],
    ['a number as user', { user: 1, password: 'x' }, 'user'],
    ['an unknown field', { user: 'a@b.test', password: 'x', admin: true }, 'admin'],
    ['an empty password', { user: 'a@b.test', password: '' }, 'password'],
  ];
  for (const [name, payload, field] of badBodies) {
    it(`answers 400 with the field for ${name}`, async () => {
      const res = await login(payload);
      assert.equal(res.statusCode, 400);
      const body = json(res);
      assert.equal(body.code, 'validation_failed');
      assert.equal(body.errors[0].field, field);
    });
  }

  it('answers 400 malformed_json for broken JSON', async () => {
    const app = await h.app();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"user":',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).code, 'malformed_json');
  });

  it('answers 415 for a body that is not JSON', async () => {
    const app = await h.app();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/login',
      headers: { 'content-type': 'text/plain' },
      payload: 'user=a&password=b',
    });
    assert.equal(res.statusCode, 415);
    assert.equal(json(res).code, 'unsupported_media_type');
    const form = await app.inject({
      method: 'POST',
      url: '/v1/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'user=a',
    });
    assert.equal(form.statusCode, 415);
  });

  it('answers 413 for a body over the limit', async () => {
    const app = await h.app({ bodyLimitBytes: 1024 });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: 'a@b.test', password: 'x'.repeat(2000) },
    });
    assert.equal(res.statusCode, 413);
    assert.equal(json(res).code, 'payload_too_large');
  });
});

describe('POST /v1/login: security', () => {
  it('answers 503 with Retry-After when the hashing queue is full, instead of queueing forever', async () => {
    const app = await h.app({ loginConcurrency: 1, loginQueueLimit: 0 });
    const world = await seedWorld(app);
    const results = await Promise.all(Array.from({ length: 4 }, () => login(world.login)));
    const statuses = results.map((r) => r.statusCode).sort();
    assert.ok(statuses.includes(200), `some login succeeds: ${statuses}`);
    const busy = results.find((r) => r.statusCode === 503);
    assert.ok(busy, `some login is refused: ${statuses}`);
    assert.equal(busy.headers['retry-after'], '1');
    assert.equal(json(busy).code, 'server_busy');
  });

  it('drops a queued login whose client hung up, freeing its place without hashing or logging in', async () => {
    const app = await h.app({ loginConcurrency: 1, loginQueueLimit: 1 });
    const world = await seedWorld(app);
    const { hasher } = app.services;
    const db = h.db.current.database.db;
    const loginsBefore = (await db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.login'))).length;
    // Keep the one hashing thread busy (operator hashing is not gated), so login A holds the slot a while.
    const backlog = Promise.all(Array.from({ length: 40 }, () => hasher.hash('backlog')));
    // A spy that calls through, counting the user lookups: a login looks its user up only when its turn to hash comes.
    const verifyThrough = hasher.verify.bind(hasher);
    let lookups = 0;
    const verify = mock.method(
      hasher,
      'verify',
      (storedHash: () => Promise<string | null>, password: string, gone?: AbortSignal) =>
        verifyThrough(
          () => {
            lookups++;
            return storedHash();
          },
          password,
          gone,
        ),
    );
    let aDone = false;
    const a = login(world.login).finally(() => (aDone = true));
    await until(() => verify.mock.callCount() === 1, 'A to reach the hashing gate');
    assert.ok(canQueue(hasher), 'A holds the slot and the queue has room for one');

    // B waits in the queue over a real socket, then its client hangs up.
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const b = http.request(`${address}/v1/login`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    const bOutcome = new Promise((resolve) => {
      b.once('response', (res) => resolve(res.statusCode));
      b.once('error', () => resolve('hung up'));
    });
    b.end(JSON.stringify(world.login));
    await until(() => verify.mock.callCount() === 2, 'B to reach the hashing gate');
    assert.equal(canQueue(hasher), false, 'B waits in the queue');
    assert.equal((await login(world.login)).statusCode, 503, 'the queue is full while B waits');
    b.destroy();
    await until(() => canQueue(hasher), 'B to leave the queue');
    assert.equal(aDone, false, 'B left the queue while A was still hashing, not when its turn came');
    assert.equal(lookups, 1, 'only A, holding the slot, looked its user up; B queued without a query');

    assert.equal((await a).statusCode, 200);
    assert.equal(await bOutcome, 'hung up');
    await backlog;
    mock.restoreAll();
    const loginsAfter = (await db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.login'))).length;
    assert.equal(loginsAfter - loginsBefore, 1, 'only A logged in');
    assert.equal(lookups, 1, 'B never looked its user up');
  });

  it('never echoes the password in an error', async () => {
    const res = await login({ user: uuid(), password: 'super-secret-password', extra: 1 });
    assert.equal(res.statusCode, 400);
    assert.ok(!res.body.includes('super-secret-password'));
  });
});
