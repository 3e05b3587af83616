import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { json, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';

const h = useTestApp();

function assertProblem(
  res: Awaited<ReturnType<Awaited<ReturnType<typeof h.app>>['inject']>>,
  status: number,
  code: string,
) {
  assert.equal(res.statusCode, status);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = json(res);
  for (const member of ['type', 'title', 'status', 'detail', 'instance', 'code', 'request_id'])
    assert.ok(member in body, `has ${member}`);
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.request_id, res.headers['x-request-id']);
  return body;
}

describe('problem details', () => {
  it('answers an unknown route with 404 not_found and the path as instance', async () => {
    const app = await h.app();
    const body = assertProblem(await app.inject({ method: 'GET', url: '/v1/nothing-here?x=1' }), 404, 'not_found');
    assert.equal(body.instance, '/v1/nothing-here');
  });

  it("echoes a caller's X-Request-Id, and makes one otherwise", async () => {
    const app = await h.app();
    const given = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-123' } });
    assert.equal(given.headers['x-request-id'], 'trace-123');
    const unsafe = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\n' } });
    assert.match(String(unsafe.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('answers an unexpected failure with 500 and no internals', async () => {
    const { database } = h.db.current;
    const app = await buildApp({ config: testConfig(), database });
    app.get('/boom', async () => {
      throw new Error('Failed query: SELECT password_hash FROM users -- secret');
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/boom' });
      const body = assertProblem(res, 500, 'internal_error');
      assert.ok(!res.body.includes('SELECT'));
      assert.ok(!res.body.includes('secret'));
      assert.ok(!('stack' in body));
    } finally {
      await app.close();
    }
  });
});

describe('database unavailable', () => {
  it('answers 503 with Retry-After, and /ready says 503, when the database is gone', async () => {
    const database = await openDatabase({ dataDir: 'memory://' });
    await database.migrate();
    const app = await buildApp({ config: testConfig(), database });
    try {
      const world = await seedWorld(app);
      const token = await loginAs(app, world.login);
      assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
      await database.close();
      const ready = await app.inject({ method: 'GET', url: '/ready' });
      assertProblem(ready, 503, 'database_unavailable');
      assert.ok(ready.headers['retry-after']);
      // The access token is verified in memory (a JWT); what it asks for needs the database.
      const merchants = await app.inject({
        method: 'GET',
        url: '/v1/merchants',
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      assertProblem(merchants, 503, 'database_unavailable');
      assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'the process is still up');
    } finally {
      await app.close();
    }
  });
});
