import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadConfig, SETTINGS } from '../../src/config.js';
import { defaultLoginConcurrency, LOGIN_QUEUE_PER_HASHER } from '../../src/config-defaults.js';
import { ConfigError } from '../../src/errors.js';
import { runFeegate } from '../helpers/cli.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 3000);
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.accessTokenTtlSeconds, 3600);
    assert.equal(c.refreshTokenTtlSeconds, 2592000);
    assert.match(c.dataDir, /\/data$/);
  });

  it('counts alone without REDIS_URL, and limits login and refresh to 60 a minute per address', () => {
    const c = loadConfig({});
    assert.equal(c.redisUrl, undefined);
    assert.equal(c.redisKeyPrefix, 'feegate:');
    assert.equal(c.rateLimitAnonymousPerMinute, 60);
    const set = loadConfig({
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: 'prod:',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
    });
    assert.deepEqual(
      [set.redisUrl, set.redisKeyPrefix, set.rateLimitAnonymousPerMinute],
      ['redis://127.0.0.1:6379', 'prod:', 0],
    );
  });

  it('limits assignment requests to 30 a minute per customer unless set; 0 turns the limit off', () => {
    assert.equal(loadConfig({}).assignmentsPerCustomerPerMinute, 30);
    assert.equal(loadConfig({ ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE: '120' }).assignmentsPerCustomerPerMinute, 120);
    assert.equal(loadConfig({ ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE: '0' }).assignmentsPerCustomerPerMinute, 0);
  });

  it('sizes the login queue by the hashing threads unless it is set', () => {
    assert.equal(LOGIN_QUEUE_PER_HASHER, 64);
    assert.equal(loadConfig({}).loginQueueLimit, 64 * defaultLoginConcurrency());
    assert.deepEqual(
      (({ loginConcurrency, loginQueueLimit }) => ({ loginConcurrency, loginQueueLimit }))(
        loadConfig({ LOGIN_CONCURRENCY: '3' }),
      ),
      { loginConcurrency: 3, loginQueueLimit: 192 },
    );
    assert.equal(loadConfig({ LOGIN_CONCURRENCY: '3', LOGIN_QUEUE_LIMIT: '0' }).loginQueueLimit, 0);
    assert.equal(defaultLoginConcurrency(1), 1);
    assert.equal(defaultLoginConcurrency(2), 1);
    assert.equal(defaultLoginConcurrency(16), 4);
  });

  it('bounds every database statement to a minute and every lock wait to 5 s unless set', () => {
    const c = loadConfig({});
    assert.deepEqual([c.databaseStatementTimeoutMs, c.databaseLockTimeoutMs], [60_000, 5000]);
    const set = loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '120000', DATABASE_LOCK_TIMEOUT_MS: '120000' });
    assert.deepEqual([set.databaseStatementTimeoutMs, set.databaseLockTimeoutMs], [120_000, 120_000]);
  });

  it('trusts no proxy by default; TRUST_PROXY takes a number of hops or proxy addresses and CIDR ranges', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({ TRUST_PROXY: ' 2 ' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1' }).trustProxy, ['10.0.0.1']);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, fd00::/8,loopback' }).trustProxy, [
      '10.0.0.0/8',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('ends sessions after 30 days and allows 100 failed logins per user name from all addresses, unless set', () => {
    const c = loadConfig({});
    assert.equal(c.sessionMaxAgeSeconds, 2_592_000);
    assert.equal(c.loginMaxFailures, 10);
    assert.equal(c.loginMaxFailuresPerUser, 100);
    const set = loadConfig({ SESSION_MAX_AGE_SECONDS: '86400', LOGIN_MAX_FAILURES_PER_USER: '0' });
    assert.deepEqual([set.sessionMaxAgeSeconds, set.loginMaxFailuresPerUser], [86_400, 0]);
  });

  it('loads the demo data only on loopback unless FEEGATE_DEMO is set', () => {
    assert.equal(loadConfig({}).loadDemoData, 'on-loopback');
    assert.equal(loadConfig({ FEEGATE_DEMO: 'true' }).loadDemoData, 'always');
    assert.equal(loadConfig({ FEEGATE_DEMO: 'false' }).loadDemoData, 'never');
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ TRUST_PROXY: 'true' }, /TRUST_PROXY=true is refused: it trusts the client's own X-Forwarded-For/],
    [{ TRUST_PROXY: 'yes' }, /TRUST_PROXY=true is refused/],
    [
      { TRUST_PROXY: '10.0.0.1, proxy.internal' },
      /TRUST_PROXY must be false, a number of proxies, or a comma-separated list .*invalid IP address: proxy\.internal/,
    ],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY must be .*invalid range/],
    [{ TRUST_PROXY: '21' }, /TRUST_PROXY must be between 0 and 20/],
    [{ SESSION_MAX_AGE_SECONDS: '0' }, /SESSION_MAX_AGE_SECONDS must be between 60 and 31536000/],
    [{ SESSION_MAX_AGE_SECONDS: '30d' }, /SESSION_MAX_AGE_SECONDS must be a whole number/],
    [{ LOGIN_MAX_FAILURES_PER_USER: '-1' }, /LOGIN_MAX_FAILURES_PER_USER must be a whole number/],
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ PORT: 'abc' }, /PORT must be a whole number/],
    [{ ACCESS_TOKEN_TTL_SECONDS: '0' }, /ACCESS_TOKEN_TTL_SECONDS/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with postgres/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ FEEGATE_DEMO: 'maybe' }, /FEEGATE_DEMO must be true or false/],
    [{ LOGIN_QUEUE_LIMIT: '-1' }, /LOGIN_QUEUE_LIMIT must be a whole number/],
    [{ LOGIN_CONCURRENCY: '0' }, /LOGIN_CONCURRENCY/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL must be a URL such as redis:/],
    [{ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '-5' }, /RATE_LIMIT_ANONYMOUS_PER_MINUTE must be a whole number/],
    [{ ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE: 'thirty' }, /ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE must be a whole number/],
    [{ ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE: '1.5' }, /ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE must be a whole number/],
    [
      { ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE: '100001' },
      /ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE must be between 0 and 100000/,
    ],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '0' }, /DATABASE_STATEMENT_TIMEOUT_MS must be between 1000 and 3600000, got 0/],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '1e4' }, /DATABASE_STATEMENT_TIMEOUT_MS must be a whole number/],
    [{ DATABASE_LOCK_TIMEOUT_MS: '0' }, /DATABASE_LOCK_TIMEOUT_MS must be between 100 and 3600000, got 0/],
    [
      { DATABASE_LOCK_TIMEOUT_MS: '30000', DATABASE_STATEMENT_TIMEOUT_MS: '10000' },
      /DATABASE_LOCK_TIMEOUT_MS \(30000\) must not exceed DATABASE_STATEMENT_TIMEOUT_MS \(10000\)/,
    ],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && message.test(err.message),
      );
    });
  }
});

describe('the configuration table of src/config.ts', () => {
  it('takes a blank variable as unset, for every variable', () => {
    const defaults = loadConfig({});
    for (const { env } of Object.values(SETTINGS)) {
      assert.deepEqual(loadConfig({ [env]: '  ' }), defaults, env);
    }
  });

  /** Variable, default and values of each row of the README's configuration table, without Markdown's backticks. */
  function readmeRows(): Map<string, [string, string]> {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.split(/^## /m).find((part) => part.startsWith('Configuration\n')) ?? '';
    const lines = section.split('\n').filter((line) => line.startsWith('|'));
    assert.equal(
      lines[0],
      '| variable | default | values | meaning |',
      'the README table has the columns this test reads',
    );
    const rows = lines.slice(2).map((line) =>
      line
        .slice(1)
        .split(' | ')
        .slice(0, 3)
        .map((cell) => cell.replaceAll('`', '').trim()),
    );
    return new Map(rows.map(([env = '', fallback = '', values = '']) => [env, [fallback, values]]));
  }

  it("is the README's table: the same variables in the same order, each with its default and values", () => {
    const readme = readmeRows();
    const settings = Object.values(SETTINGS);
    assert.deepEqual(
      [...readme.keys()],
      settings.map((s) => s.env),
      'README.md lists the variables of SETTINGS',
    );
    for (const s of settings) {
      assert.deepEqual(readme.get(s.env), [s.default, s.values], `README.md's default and values of ${s.env}`);
    }
  });

  it('is what feegate help config prints: every variable with its default, values and meaning', async () => {
    const { code, stdout, stderr } = await runFeegate(['help', 'config'], process.env);
    assert.equal(code, 0, stderr);
    for (const s of Object.values(SETTINGS)) {
      assert.ok(
        stdout.includes(`  ${s.env}  default ${s.default}; ${s.values}\n      ${s.description}\n`),
        `feegate help config shows ${s.env}`,
      );
    }
    assert.match(stdout, /^ {2}PORT {2}default 3000; 0 to 65535\n {6}port to listen on$/m);
    const extra = await runFeegate(['help', 'config', 'PORT'], process.env);
    assert.deepEqual([extra.code, extra.stdout], [1, '']);
    assert.match(extra.stderr, /usage: feegate help config/);
    const help = await runFeegate(['help'], process.env);
    assert.match(help.stdout, /help config\s+list the configuration variables/);
    assert.match(help.stdout, /FEEGATE_DATA_DIR \(\.\/data\)/);
  });
});
