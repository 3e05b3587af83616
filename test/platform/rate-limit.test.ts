/** Rate limits and the failed-login count (docs/key-lifecycle.md#rate-limits-and-redis), in memory and shared through Redis. */
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { createKey, whoAmI } from '../helpers/api-keys.js';
import { customerSession, seedWorld } from '../helpers/fixtures.js';
import { NEEDS_REDIS, startRedisProxy, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const h = useTestApp();

const login = (app: FastifyInstance, payload: object) => app.inject({ method: 'POST', url: '/v1/login', payload });

async function limitedKey(app: FastifyInstance, token: string, customerId: string, limit: number, windowSeconds = 60) {
  const res = await createKey(
    app,
    { token },
    { user: 'limited@alpha.test', customer_id: customerId, rate_limit: { limit, window_seconds: windowSeconds } },
  );
  assert.equal(res.statusCode, 201, res.body);
  return json(res).api_key as string;
}

function assertRateLimited(res: Awaited<ReturnType<typeof whoAmI>>, limit: number) {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(json(res).code, 'rate_limited');
  assert.match(String(res.headers['content-type']), /application\/problem\+json/);
  assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  assert.ok(Number(res.headers['ratelimit-reset']) >= 1);
}

describe('per-key rate limits (in memory)', () => {
  it('lets a key make `limit` requests per window with RateLimit-* headers, then answers 429 with Retry-After', async () => {
    const { app, world, token } = await customerSession(h);
    const key = await limitedKey(app, token, world.customerId, 3);
    for (let i = 0; i < 3; i++) {
      const res = await whoAmI(app, key);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], '3');
      assert.equal(res.headers['ratelimit-remaining'], String(2 - i));
      assert.ok(Number(res.headers['ratelimit-reset']) > 0);
    }
    assertRateLimited(await whoAmI(app, key), 3);
    // The limit is the key's own, across routes; other callers are not affected.
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/api-keys', headers: { 'x-api-key': key } })).statusCode,
      429,
    );
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users/me', headers: { authorization: `Bearer ${token}` } }))
        .statusCode,
      200,
    );
  });

  it('starts a new window when the old one ends', async () => {
    const { app, world, token } = await customerSession(h);
    const key = await limitedKey(app, token, world.customerId, 1, 1);
    assert.equal((await whoAmI(app, key)).statusCode, 200);
    assert.equal((await whoAmI(app, key)).statusCode, 429);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await whoAmI(app, key)).statusCode, 200);
  });

  it('leaves keys without a rate_limit alone: no headers, no counting', async () => {
    const { app, world, token } = await customerSession(h);
    const key = json(
      await createKey(app, { token }, { user: 'free@alpha.test', customer_id: world.customerId }),
    ).api_key;
    const incr = mock.method(app.services.rateLimits, 'incr');
    for (let i = 0; i < 5; i++) {
      const res = await whoAmI(app, key);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], undefined);
    }
    assert.equal(incr.mock.callCount(), 0, 'no counter is touched');
    mock.restoreAll();
  });
});

describe('per-address limit of login and refresh (in memory)', () => {
  it('answers 429 rate_limited once an address used up RATE_LIMIT_ANONYMOUS_PER_MINUTE', async () => {
    const app = await h.app({ rateLimitAnonymousPerMinute: 3 });
    const world = await seedWorld(app);
    const first = await login(app, world.login);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['ratelimit-limit'], '3');
    await app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: 'fgr_unknown' } });
    assert.equal((await login(app, world.login)).statusCode, 200);
    assertRateLimited(await login(app, world.login), 3);
    const refresh = await app.inject({
      method: 'POST',
      url: '/v1/login/refresh',
      payload: { refresh_token: 'fgr_unknown' },
    });
    assert.equal(refresh.statusCode, 429);
    // Another address is counted apart.
    assert.equal(
      (await app.inject({ method: 'POST', url: '/v1/login', payload: world.login, remoteAddress: '10.0.0.9' }))
        .statusCode,
      200,
    );
  });
});

describe('the client address behind a proxy (TRUST_PROXY)', () => {
  /** A login as a proxy passes it on: from the proxy's socket, the client's own X-Forwarded-For with the real address appended. */
  const viaProxy = (app: FastifyInstance, proxy: string, forwardedFor: string, user = 'nobody@proxy.test') =>
    app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user, password: 'wrong' },
      remoteAddress: proxy,
      headers: { 'x-forwarded-for': forwardedFor },
    });
  const trusting = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;

  it('with one hop, a client that writes its own X-Forwarded-For is still counted by its real address', async () => {
    const app = await h.app({
      trustProxy: trusting('1'),
      // Each allowed login hashes: a small limit keeps the test well inside one window on a loaded machine.
      rateLimitAnonymousPerMinute: 10,
      loginMaxFailures: 0,
      loginMaxFailuresPerUser: 0,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++)
      statuses.push((await viaProxy(app, '10.0.0.1', `198.51.100.${i}, 203.0.113.7`)).statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 10, 'the limit of 10 holds');
    assert.equal(statuses.filter((s) => s === 429).length, 15);
    // Another client behind the same proxy has a count of its own.
    assert.equal((await viaProxy(app, '10.0.0.1', '203.0.113.8')).statusCode, 401);
  });

  it("with the proxies' addresses, the client is the first untrusted address from the right", async () => {
    const app = await h.app({
      trustProxy: trusting('10.0.0.0/24, 192.168.1.5'),
      rateLimitAnonymousPerMinute: 2,
      loginMaxFailures: 0,
      loginMaxFailuresPerUser: 0,
    });
    // Through two trusted proxies: whatever the client wrote on the left, it is 203.0.113.7.
    assert.equal((await viaProxy(app, '10.0.0.1', 'spoofed-1, 203.0.113.7, 192.168.1.5')).statusCode, 401);
    assert.equal((await viaProxy(app, '10.0.0.2', '198.51.100.1, 203.0.113.7, 192.168.1.5')).statusCode, 401);
    assert.equal((await viaProxy(app, '10.0.0.3', '198.51.100.2, 203.0.113.7')).statusCode, 429);
    // A peer that is not a proxy is the client, whatever X-Forwarded-For it sends.
    assert.equal((await viaProxy(app, '198.51.100.9', '203.0.113.99')).statusCode, 401);
    assert.equal((await viaProxy(app, '198.51.100.9', '203.0.113.98')).statusCode, 401);
    assert.equal((await viaProxy(app, '198.51.100.9', '203.0.113.97')).statusCode, 429);
  });
});

describe('failed logins are counted before hashing', () => {
  it('checks at most 10 of 40 parallel wrong passwords; the rest are 429 too_many_login_attempts', async () => {
    const app = await h.app({ rateLimitAnonymousPerMinute: 0 });
    const world = await seedWorld(app);
    const verify = mock.method(app.services.hasher, 'verify');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login(app, { user: world.login.user, password: `guess-${i}` })),
    );
    mock.restoreAll();
    const statuses = results.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 30);
    assert.ok(verify.mock.callCount() <= 10, `${verify.mock.callCount()} passwords were checked`);
    const locked = results.find((r) => r.statusCode === 429)!;
    assert.equal(json(locked).code, 'too_many_login_attempts');
    assert.ok(Number(locked.headers['retry-after']) > 0);
  });
});

describe('shared through Redis', { skip: NEEDS_REDIS }, () => {
  const shared = () => ({ redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniquePrefix() });

  it("two instances refuse the 11th failed login and a key's (limit+1)th request across both", async () => {
    const config = shared();
    const { app, world, token } = await customerSession(h, config);
    const second = await secondInstance(h, config);
    try {
      for (let i = 0; i < 10; i++) {
        const res = await login(i % 2 ? second : app, { user: world.login.user, password: `guess-${i}` });
        assert.equal(res.statusCode, 401);
      }
      for (const instance of [app, second]) {
        const res = await login(instance, world.login);
        assert.equal(res.statusCode, 429, 'the 11th attempt is refused on either instance');
        assert.equal(json(res).code, 'too_many_login_attempts');
      }
      const key = await limitedKey(app, token, world.customerId, 4);
      for (let i = 0; i < 4; i++) assert.equal((await whoAmI(i % 2 ? second : app, key)).statusCode, 200);
      assertRateLimited(await whoAmI(second, key), 4);
      assertRateLimited(await whoAmI(app, key), 4);
    } finally {
      await second.close();
    }
  });

  it('keeps serving without a 5xx when Redis goes away, counting locally, and logs it once', async () => {
    const proxy = await startRedisProxy();
    let closed = false;
    try {
      const { app, world, token } = await customerSession(h, { ...shared(), redisUrl: proxy.url });
      const warnings: string[] = [];
      const warn = mock.method(app.log, 'warn', (obj: unknown, msg?: string) => void warnings.push(String(msg ?? obj)));
      const key = await limitedKey(app, token, world.customerId, 5);
      assert.equal((await whoAmI(app, key)).statusCode, 200);
      assert.equal((await whoAmI(app, key)).statusCode, 200);
      await proxy.close();
      closed = true;
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await whoAmI(app, key)).statusCode);
      for (let i = 0; i < 3; i++)
        statuses.push((await login(app, { user: world.login.user, password: 'wrong' })).statusCode);
      statuses.push((await login(app, world.login)).statusCode);
      warn.mock.restore();
      assert.ok(
        statuses.every((s) => s < 500),
        `no 5xx: ${statuses}`,
      );
      assert.ok(statuses.slice(0, 8).includes(429), 'the key is still limited, locally');
      assert.equal(statuses.at(-1), 200, 'logins still work');
      const outages = warnings.filter((w) => /Redis unavailable/.test(w));
      assert.ok(
        outages.length >= 1 && outages.length <= 2,
        `logged once per set of counters, not per request: ${outages.length}`,
      );
    } finally {
      if (!closed) await proxy.close();
    }
  });
});
