/** feegate users logout and users unlock: the logins and failed-login counts of running instances, on the database and on Redis. */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import { bearer } from '../helpers/app.js';
import { cliDatabaseAccess, runFeegate, useCliDatabase } from '../helpers/cli.js';
import { loginAs } from '../helpers/fixtures.js';
import { NEEDS_REDIS, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const cli = useCliDatabase('feegate-cli-logins-');
const feegate = (...args: string[]) => runFeegate(args, cli.env);
const { withApp, customerCount } = cliDatabaseAccess(cli);

const me = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
const refresh = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: token } });
const wrongLogin = (app: FastifyInstance, user: string) =>
  app.inject({ method: 'POST', url: '/v1/login', payload: { user, password: 'a-wrong-guess' } });

describe('feegate users logout and unlock', () => {
  // Each test loads the demo data on a database without customers: the database needs its tables first.
  before(async () => assert.equal((await feegate('migrate')).code, 0));

  it('users logout ends every login of a login user, on every running instance', async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acme = DEMO_LOGINS[0];
    const logout = () => feegate('users', 'logout', '--email', acme.user.toUpperCase());
    const assertEnded = async (
      app: FastifyInstance,
      tokens: Array<{ access_token: string; refresh_token: string }>,
    ) => {
      for (const token of tokens) {
        await waitFor(
          async () => (await me(app, token.access_token)).statusCode === 401,
          'the running instance refused the access token',
          { timeoutMs: 1000 },
        );
        assert.equal((await refresh(app, token.refresh_token)).statusCode, 401);
      }
    };
    let res: Awaited<ReturnType<typeof logout>>;
    if (cli.pg) {
      // PostgreSQL: the instance runs while the command line ends its logins.
      res = await withApp({}, async (app) => {
        const tokens = [await loginAs(app, acme), await loginAs(app, acme)];
        const out = await logout();
        await assertEnded(app, tokens);
        return out;
      });
    } else {
      // Embedded: one process at a time; the next start refuses the tokens.
      const tokens = await withApp({}, async (app) => [await loginAs(app, acme), await loginAs(app, acme)]);
      res = await logout();
      await withApp({}, (app) => assertEnded(app, tokens));
    }
    assert.equal(res.code, 0, res.stderr);
    assert.ok(
      Number(/^(\d+) login\(s\) of \S+ ended, on every running instance\n$/.exec(res.stdout)?.[1]) >= 2,
      res.stdout,
    );
    const unknown = await feegate('users', 'logout', '--email', 'nobody@acme.test');
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'feegate: user_not_found: No login user has this e-mail.\n');
    const bad = await feegate('users', 'logout', '--email', 'not-an-email');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--email "not-an-email" is not an e-mail address/);
    const missing = await feegate('users', 'unlock');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--email is required; usage: feegate users unlock --email <e-mail>/);
  });

  it('users unlock clears the failed-login counts of every running instance', async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acme = DEMO_LOGINS[0];
    const overrides = { loginMaxFailures: 2, rateLimitAnonymousPerMinute: 0 };
    if (!cli.pg) {
      // Embedded: no instance can run beside the command line; its counts die with it.
      const res = await feegate('users', 'unlock', '--email', acme.user);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, `failed-login counts of ${acme.user} cleared, on every running instance\n`);
      return;
    }
    await withApp(overrides, async (app) => {
      for (let i = 0; i < 2; i++) assert.equal((await wrongLogin(app, acme.user)).statusCode, 401);
      assert.equal((await app.inject({ method: 'POST', url: '/v1/login', payload: acme })).statusCode, 429);
      const res = await feegate('users', 'unlock', '--email', acme.user.toUpperCase());
      assert.equal(res.code, 0, res.stderr);
      await waitFor(
        async () => (await app.inject({ method: 'POST', url: '/v1/login', payload: acme })).statusCode === 200,
        'the running instance forgot its counts',
      );
    });
  });

  it('users unlock clears the counts Redis holds for every instance', { skip: NEEDS_REDIS }, async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acme = DEMO_LOGINS[0];
    const overrides = {
      loginMaxFailures: 2,
      rateLimitAnonymousPerMinute: 0,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: uniquePrefix(),
    };
    await withApp(overrides, async (app) => {
      for (let i = 0; i < 2; i++) assert.equal((await wrongLogin(app, acme.user)).statusCode, 401);
    });
    // A fresh instance knows only what Redis holds: still locked out.
    const login = (app: FastifyInstance) => app.inject({ method: 'POST', url: '/v1/login', payload: acme });
    assert.equal(await withApp(overrides, async (app) => (await login(app)).statusCode), 429);
    const res = await runFeegate(['users', 'unlock', '--email', acme.user], {
      ...cli.env,
      REDIS_URL: overrides.redisUrl,
      REDIS_KEY_PREFIX: overrides.redisKeyPrefix,
    });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await withApp(overrides, async (app) => (await login(app)).statusCode), 200);
    const away = await runFeegate(['users', 'unlock', '--email', acme.user], {
      ...cli.env,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    assert.equal(away.code, 1);
    assert.match(away.stderr, /^feegate: cannot reach Redis \(REDIS_URL\) to clear the counts it shares/);
  });
});
