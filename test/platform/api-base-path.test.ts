/** The platform base path /api: every operation answers under it as at its own path; problems and logs name the path written. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { createFeegateClient } from '../../clients/typescript/index.js';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { json, useTestApp } from '../helpers/app.js';
import { issueKey, seedWorld, uuid } from '../helpers/fixtures.js';
import { openapiDocument, operations, type Operation, type Schema } from '../helpers/openapi.js';
import { portOf } from '../helpers/raw-http.js';

const h = useTestApp();

/** The generated client's generic call: an operation of the document with its documented examples. */
type Call = (
  method: string,
  path: string,
  init: object,
) => Promise<{ response: Response; error?: { code?: string; instance?: string } }>;

/** The documented examples; an id in the path is `merchantId` under /merchants/, else one of nothing (the same for both calls). */
function exampleInit(op: Operation, merchantId: string): object {
  const nothing = uuid();
  const path = Object.fromEntries(
    op.parameters
      .filter((p) => p.in === 'path')
      .map((p) => [p.name, p.example ?? (op.path.startsWith('/v1/merchants/') ? merchantId : nothing)]),
  );
  const query = Object.fromEntries(
    op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, p.example]),
  );
  return {
    params: { path, query },
    ...(op.body ? { body: op.bodyExample } : {}),
    // A streamed text answer (NDJSON, CSV) is read as text, as a client of it would.
    ...(op.answersJson ? {} : { parseAs: 'text' }),
  };
}

describe('the platform base path /api', () => {
  it('answers every operation of the document under /api as at its own path, through the generated client', async () => {
    const app = await h.app({ rateLimitAnonymousPerMinute: 0 });
    const world = await seedWorld(app);
    const { api_key } = await issueKey(app, { user: 'walker@alpha.test', customerId: world.customerId });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const origin = `http://127.0.0.1:${portOf(app)}`;
    const doc = await openapiDocument(app);
    assert.deepEqual(
      doc.servers.map((s: Schema) => s.url),
      ['{origin}', '{origin}/api'],
    );
    const call = (base: string): Call => createFeegateClient(base, { apiKey: api_key }).request as unknown as Call;
    const [root, prefixed] = [call(origin), call(`${origin}/api`)];
    const differences: string[] = [];
    let succeeded = 0;
    for (const op of operations(doc)) {
      const init = exampleInit(op, world.merchantIds[0]!);
      const method = op.method.toLowerCase();
      const atRoot = await root(method, op.path, init);
      const underApi = await prefixed(method, op.path, init);
      const label = `${op.method} ${op.path}: ${atRoot.response.status} ${atRoot.error?.code ?? ''} / under /api ${underApi.response.status} ${underApi.error?.code ?? ''}`;
      // The platform SDK's /auth/users answers under /api too (contract section 20).
      if (!/^\/(v[12]|auth)\//.test(op.path)) {
        // Operations outside the API's versions stay at the root only.
        if (underApi.response.status !== 404 || underApi.error?.code !== 'not_found')
          differences.push(`${label} (only at the root)`);
        continue;
      }
      // Creating a plan is not repeatable: the plan the root call made exists when the same body comes under /api.
      const createdTwice = atRoot.response.status === 201 && underApi.error?.code === 'payment_plan_exists';
      if (
        !createdTwice &&
        (underApi.response.status !== atRoot.response.status || underApi.error?.code !== atRoot.error?.code)
      )
        differences.push(label);
      if (underApi.error && !/^\/api\/(v[12]|auth)\//.test(underApi.error.instance ?? ''))
        differences.push(`${label} (instance ${underApi.error.instance})`);
      if (underApi.response.ok) succeeded++;
    }
    assert.deepEqual(differences, []);
    assert.ok(succeeded >= 5, `${succeeded} operations succeeded under /api`);
  });

  it('keeps /health, /ready, /docs, /console and /.well-known/jwks.json at the root only', async () => {
    const app = await h.app();
    // /console is served only once built (npm run build): not asked here, its /api twin is a 404 either way.
    for (const path of ['/health', '/ready', '/docs', '/.well-known/jwks.json', '/v1/openapi.json']) {
      assert.ok([200, 302].includes((await app.inject({ url: path })).statusCode), path);
    }
    for (const path of [
      '/api/health',
      '/api/ready',
      '/api/docs',
      '/api/console/',
      '/api/.well-known/jwks.json',
      '/api',
      '/api/v1',
      '/api/api/v1/users/me',
      '/API/v1/users/me',
    ]) {
      const res = await app.inject({ url: path });
      assert.equal(res.statusCode, 404, path);
      assert.equal(json(res).instance, path);
    }
  });

  it('names the path as the client wrote it in problems, and logs one route with the original beside it', async () => {
    const lines: Array<Record<string, any>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, any>);
        done();
      },
    });
    const config = testConfig({ logLevel: 'info' });
    const app = await buildApp({
      config,
      database: h.db.current.database,
      loggerInstance: pino(loggerOptions(config) as object, sink),
    });
    try {
      const world = await seedWorld(app);
      const { api_key } = await issueKey(app, { user: 'logged@alpha.test', customerId: world.customerId });
      const refused = await app.inject({ url: '/api/v1/users/me?x=1' });
      assert.equal(json(refused).instance, '/api/v1/users/me');
      assert.equal((await app.inject({ url: '/api/v1/users/me', headers: { 'x-api-key': api_key } })).statusCode, 200);
      assert.equal((await app.inject({ url: '/v1/users/me', headers: { 'x-api-key': api_key } })).statusCode, 200);
    } finally {
      await app.close();
    }
    const incoming = lines.filter((l) => l.msg === 'incoming request').map((l) => l.req);
    assert.deepEqual(incoming, [
      {
        method: 'GET',
        url: '/v1/users/me?x=1',
        original_url: '/api/v1/users/me?x=1',
        host: 'localhost:80',
        remoteAddress: '127.0.0.1',
      },
      {
        method: 'GET',
        url: '/v1/users/me',
        original_url: '/api/v1/users/me',
        host: 'localhost:80',
        remoteAddress: '127.0.0.1',
      },
      { method: 'GET', url: '/v1/users/me', host: 'localhost:80', remoteAddress: '127.0.0.1' },
    ]);
  });
});
