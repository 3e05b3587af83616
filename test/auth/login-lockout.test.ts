/**
 * Failed logins are counted per user name and client address, with a wider limit
 * per user name from all addresses: guesses from one address never lock the
 * owner out elsewhere. Counted here and in Redis; cleared by the operator. A
 * successful login forgets them, and a login refused before its password was
 * checked (the hashing queue full) is none.
 */
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../../src/errors.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { seedWorld } from '../helpers/fixtures.js';
import { NEEDS_REDIS, startRedisProxy, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

const login = (app: FastifyInstance, payload: { user: string; password: string }, address = '127.0.0.1') =>
  app.inject({ method: 'POST', url: '/v1/login', payload, remoteAddress: address });
const wrong = (user: string) => ({ user, password: 'not-the-password' });

function assertLockedOut(res: Awaited<ReturnType<typeof login>>) {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(json(res).code, 'too_many_login_attempts');
  assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
}

describe('POST /v1/login: lockout', () => {
  it('locks a user name out with 429 and Retry-After after too many failures, without hashing', async () => {
    const app = await h.app({ loginMaxFailures: 3, loginFailureWindowSeconds: 600 });
    const world = await seedWorld(app);
    for (let i = 0; i < 3; i++)
      assert.equal((await login(app, { user: world.login.user, password: `guess-${i}` })).statusCode, 401);
    const verify = mock.method(app.services.hasher, 'verify');
    const locked = await login(app, world.login);
    mock.restoreAll();
    assertLockedOut(locked);
    assert.ok(Number(locked.headers['retry-after']) <= 600);
    assert.equal(verify.mock.callCount(), 0, 'no hashing while locked out');
    // Other user names are not affected, and unknown names are locked out alike.
    assert.equal((await login(app, world.otherLogin)).statusCode, 200);
    for (let i = 0; i < 3; i++) await login(app, { user: 'ghost@alpha.test', password: 'x' });
    assertLockedOut(await login(app, { user: 'ghost@alpha.test', password: 'x' }));
  });

  it('forgets failures after a successful login', async () => {
    const app = await h.app({ loginMaxFailures: 3 });
    const world = await seedWorld(app);
    for (let i = 0; i < 2; i++) await login(app, wrong(world.login.user));
    assert.equal((await login(app, world.login)).statusCode, 200);
    for (let i = 0; i < 2; i++) await login(app, wrong(world.login.user));
    assert.equal((await login(app, world.login)).statusCode, 200);
  });

  it('does not count a login refused before its password was checked toward the lockout', async () => {
    const app = await h.app({ loginMaxFailures: 2, loginMaxFailuresPerUser: 2, loginFailureWindowSeconds: 600 });
    const world = await seedWorld(app);
    // The hashing gate refuses, as it does when its queue is full or the client has gone.
    mock.method(app.services.hasher, 'verify', async () => {
      throw new ServiceUnavailableError('server_busy', 'Too many logins at once; retry shortly.', 1);
    });
    for (let i = 0; i < 3; i++) assert.equal((await login(app, world.login)).statusCode, 503);
    mock.restoreAll();
    const res = await login(app, world.login);
    assert.equal(res.statusCode, 200, `three refused logins are no failures: ${res.body}`);
  });
});

describe('lockout without denial of service', () => {
  it('ten guesses from one address lock that address out, never the owner elsewhere', async () => {
    const app = await h.app({ rateLimitAnonymousPerMinute: 0 });
    const world = await seedWorld(app);
    for (let i = 0; i < 10; i++)
      assert.equal((await login(app, wrong(world.login.user), '198.51.100.66')).statusCode, 401);
    // The guessing address is refused even the right password, without hashing it.
    const verify = mock.method(app.services.hasher, 'verify');
    assertLockedOut(await login(app, world.login, '198.51.100.66'));
    assert.equal(verify.mock.callCount(), 0);
    mock.restoreAll();
    // The owner, from anywhere else, logs in.
    assert.equal((await login(app, world.login, '203.0.113.5')).statusCode, 200);
    assert.equal((await login(app, world.login, '2001:db8::5')).statusCode, 200);
  });

  it('per user name from all addresses the limit holds, and refused addresses do not use it up', async () => {
    const app = await h.app({ rateLimitAnonymousPerMinute: 0, loginMaxFailures: 3, loginMaxFailuresPerUser: 5 });
    const world = await seedWorld(app);
    const user = world.login.user;
    for (let i = 0; i < 3; i++) assert.equal((await login(app, wrong(user), '198.51.100.1')).statusCode, 401);
    // Twenty more from that address are refused and not counted against the user name.
    for (let i = 0; i < 20; i++) assertLockedOut(await login(app, wrong(user), '198.51.100.1'));
    // A successful login takes its own attempt back: still 3 of 5.
    assert.equal((await login(app, world.login, '203.0.113.5')).statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await login(app, wrong(user), '198.51.100.2')).statusCode, 401);
    // 5 of 5 used: the next attempt from any address is refused, the owner's too.
    assertLockedOut(await login(app, wrong(user), '198.51.100.3'));
    assertLockedOut(await login(app, world.login, '203.0.113.5'));
    // Other user names are not affected.
    assert.equal((await login(app, world.otherLogin, '198.51.100.1')).statusCode, 200);
  });

  it('parallel guesses from many addresses never check more passwords than the per-user limit', async () => {
    const app = await h.app({ rateLimitAnonymousPerMinute: 0, loginMaxFailures: 10, loginMaxFailuresPerUser: 5 });
    const world = await seedWorld(app);
    const verify = mock.method(app.services.hasher, 'verify');
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => login(app, wrong(world.login.user), `198.51.100.${i + 1}`)),
    );
    mock.restoreAll();
    const statuses = results.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 401).length, 5);
    assert.equal(statuses.filter((s) => s === 429).length, 25);
    assert.ok(verify.mock.callCount() <= 5, `${verify.mock.callCount()} passwords were checked`);
  });

  it('feegate users unlock clears the counts on every running instance', async () => {
    const config = { rateLimitAnonymousPerMinute: 0, loginMaxFailures: 2, loginMaxFailuresPerUser: 3 };
    const app = await h.app(config);
    const second = await secondInstance(h, config);
    try {
      const world = await seedWorld(app);
      // Without Redis each instance counts alone: the second one holds the counts.
      for (let i = 0; i < 2; i++)
        assert.equal((await login(second, wrong(world.login.user), '198.51.100.1')).statusCode, 401);
      assertLockedOut(await login(second, world.login, '198.51.100.1'));
      await app.services.auth.unlock(world.login.user.toUpperCase());
      // The second instance hears of it by NOTIFY.
      await waitFor(
        async () => (await login(second, world.login, '198.51.100.1')).statusCode === 200,
        'the second instance forgot its counts',
      );
    } finally {
      await second.close();
    }
  });
});

describe('lockout with Redis', { skip: NEEDS_REDIS }, () => {
  const shared = () => ({
    redisUrl: TEST_REDIS_URL,
    redisKeyPrefix: uniquePrefix(),
    rateLimitAnonymousPerMinute: 0,
    loginMaxFailures: 3,
  });

  it('an instance still refuses what it has counted itself after Redis restarted empty', async () => {
    const config = shared();
    const app = await h.app(config);
    const world = await seedWorld(app);
    for (let i = 0; i < 3; i++) assert.equal((await login(app, wrong(world.login.user))).statusCode, 401);
    const redis = new Redis(TEST_REDIS_URL!);
    try {
      const keys = await redis.keys(`${config.redisKeyPrefix}*`);
      assert.ok(keys.length > 0, 'the counts were in Redis');
      await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    assertLockedOut(await login(app, world.login));
  });

  it('an instance still refuses what it has counted itself while Redis is away', async () => {
    const proxy = await startRedisProxy();
    let closed = false;
    try {
      const app = await h.app({ ...shared(), redisUrl: proxy.url });
      const world = await seedWorld(app);
      for (let i = 0; i < 3; i++) assert.equal((await login(app, wrong(world.login.user))).statusCode, 401);
      await proxy.close();
      closed = true;
      assertLockedOut(await login(app, world.login));
    } finally {
      if (!closed) await proxy.close();
    }
  });

  it('unlock clears the counts in Redis too, so a fresh instance lets the owner in', async () => {
    const config = shared();
    const app = await h.app(config);
    const world = await seedWorld(app);
    for (let i = 0; i < 3; i++) await login(app, wrong(world.login.user));
    const fresh = await secondInstance(h, config);
    try {
      assertLockedOut(await login(fresh, world.login));
      await app.services.auth.unlock(world.login.user);
      const third = await secondInstance(h, config);
      try {
        assert.equal(
          (await login(third, world.login)).statusCode,
          200,
          'Redis holds no count of the user name any more',
        );
      } finally {
        await third.close();
      }
    } finally {
      await fresh.close();
    }
  });
});
