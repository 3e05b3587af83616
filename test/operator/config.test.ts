import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

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

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
    [{ PORT: 'abc' }, /PORT must be a whole number/],
    [{ ACCESS_TOKEN_TTL_SECONDS: '0' }, /ACCESS_TOKEN_TTL_SECONDS/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with postgres/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ FEEGATE_DEMO: 'maybe' }, /FEEGATE_DEMO must be true or false/],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(() => loadConfig(env), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});
