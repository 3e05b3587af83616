/**
 * Real integrations, unchanged: what the platform's own clients send on the
 * wire works here too (docs/api.md, "Integrations moving from the platform").
 * Requests are written byte for byte over a socket where fetch or inject would
 * tidy them (a Content-Type with no body, Content-Length: 0, QUERY).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { createFeegateClient } from '../../clients/typescript/index.js';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { paymentPlans } from '../../src/db/schema.js';
import { keysSnapshot, whoAmI } from '../helpers/api-keys.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey, loginAs, seedWorld, uuid } from '../helpers/fixtures.js';
import { fillPath, openapiDocument, operations, type Operation, queryString, type Schema } from '../helpers/openapi.js';
import { portOf, rawExchange, type RawAnswer } from '../helpers/raw-http.js';

const h = useTestApp();
const JSON_TYPE = { 'Content-Type': 'application/json' };
/** The two ways the clients send nothing: a zero length, or no length at all. */
const NO_BODY: Array<Record<string, string>> = [{ 'Content-Length': '0' }, {}];

/** One request as written on the wire, `Connection: close` so that the answer ends the exchange. */
async function wire(
  app: FastifyInstance,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<RawAnswer> {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
  const head = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  return rawExchange(portOf(app), `${head.join('\r\n')}\r\n\r\n${body}`);
}

function problemOf(answer: RawAnswer, status: number, code: string): Record<string, any> {
  assert.equal(answer.status, status, answer.body);
  assert.match(answer.headers['content-type'] ?? '', /^application\/problem\+json/);
  const problem = JSON.parse(answer.body) as Record<string, any>;
  assert.equal(problem.code, code, answer.body);
  return problem;
}

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('an empty body declared as JSON is no body', () => {
  it('revokes a key, rolls a key and logs out with Content-Type: application/json and no body', async () => {
    const { app, world } = await customerSession(h);
    for (const [i, noBody] of NO_BODY.entries()) {
      for (const type of ['application/json', 'application/json; charset=UTF-8']) {
        const token = (await loginAs(app, world.login)).access_token;
        const headers = { ...auth(token), 'Content-Type': type, ...noBody };
        const revoked = await issueKey(app, { user: `revoked-${i}@alpha.test`, customerId: world.customerId });
        const rolled = await issueKey(app, { user: `rolled-${i}@alpha.test`, customerId: world.customerId });
        const label = `${type} ${JSON.stringify(noBody)}`;

        assert.equal((await wire(app, 'DELETE', `/v1/api-keys/${revoked.id}`, headers)).status, 204, label);
        assert.equal(json(await whoAmI(app, revoked.api_key)).code, 'invalid_api_key', `${label}: the key is revoked`);

        const roll = await wire(app, 'POST', `/v1/api-keys/${rolled.id}/roll`, headers);
        assert.equal(roll.status, 201, `${label}: ${roll.body}`);
        const successor = JSON.parse(roll.body) as { api_key: string };
        assert.equal((await whoAmI(app, successor.api_key)).statusCode, 200, `${label}: the new key works`);
        assert.equal(
          (await whoAmI(app, rolled.api_key)).statusCode,
          401,
          `${label}: the old one, without grace, does not`,
        );

        assert.equal((await wire(app, 'POST', '/v1/logout', headers)).status, 204, label);
        const after = await app.inject({ url: '/v1/users/me', headers: bearer(token) });
        assert.equal(json(after).code, 'invalid_token', `${label}: the token is revoked`);
      }
    }
  });

  it('answers 400 validation_failed naming the body where one is required, and changes nothing', async () => {
    const { app, world, token } = await customerSession(h);
    const key = await issueKey(app, { user: 'kept@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(app.database);
    for (const noBody of NO_BODY) {
      for (const [method, path] of [
        ['POST', '/v1/api-keys'],
        ['PATCH', `/v1/api-keys/${key.id}`],
        ['POST', '/v1/fee-rules/bulk-assign'],
        ['POST', '/v1/fee-rules/bulk-assign/all'],
        ['POST', '/v1/login'],
        ['POST', '/v1/login/refresh'],
      ] as const) {
        const problem = problemOf(
          await wire(app, method, path, { ...auth(token), ...JSON_TYPE, ...noBody }),
          400,
          'validation_failed',
        );
        assert.deepEqual(problem.errors, [{ field: 'body', message: 'must be an object' }], `${method} ${path}`);
      }
    }
    assert.equal(await keysSnapshot(app.database), before, 'nothing changed');
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
  });

  it('still refuses a body of blanks or broken JSON as malformed_json, and changes nothing', async () => {
    const { app, world, token } = await customerSession(h);
    const key = await issueKey(app, { user: 'kept@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(app.database);
    for (const body of [' ', '\r\n', '{']) {
      const headers = { ...auth(token), ...JSON_TYPE, 'Content-Length': String(Buffer.byteLength(body)) };
      problemOf(await wire(app, 'DELETE', `/v1/api-keys/${key.id}`, headers, body), 400, 'malformed_json');
    }
    assert.equal(await keysSnapshot(app.database), before, 'nothing changed');
  });
});

describe('routing comes before the body', () => {
  it('answers 404 not_found to an unknown path, whatever the body and its content type', async () => {
    const { app, token } = await customerSession(h);
    const id = uuid();
    const cases: Array<[string, string, Record<string, string>, string]> = [
      ['DELETE', `/v1/settlements/${id}`, { ...JSON_TYPE, 'Content-Length': '0' }, ''],
      ['DELETE', `/v1/settlements/${id}`, JSON_TYPE, ''],
      ['POST', '/v1/settlements/mock/send-payment-notification', { ...JSON_TYPE, 'Content-Length': '0' }, ''],
      [
        'POST',
        '/api/v1/settlements/mock/send-payment-notification',
        { ...auth(token), ...JSON_TYPE, 'Content-Length': '0' },
        '',
      ],
      ['POST', '/v1/settlements', { ...JSON_TYPE, 'Content-Length': '1' }, '{'],
      ['POST', '/v1/settlements', { 'Content-Type': 'text/plain', 'Content-Length': '5' }, 'hello'],
    ];
    for (const [method, path, headers, body] of cases) {
      const problem = problemOf(await wire(app, method, path, headers, body), 404, 'not_found');
      assert.equal(problem.instance, path);
    }
  });

  it('answers 405 with Allow to a known path asked with another method, whatever the body, and changes nothing', async () => {
    const { app, world, token } = await customerSession(h);
    const key = await issueKey(app, { user: 'kept@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(app.database);
    const cases: Array<[string, string, Record<string, string>, string, string]> = [
      // Only this path's own methods, never those of its parametric neighbour PATCH /v1/users/{id}.
      ['PUT', '/v1/users/me', { ...JSON_TYPE, 'Content-Length': '0' }, '', 'GET, HEAD'],
      ['PATCH', '/v1/users/me', { ...JSON_TYPE, 'Content-Length': '12' }, '{"name":"x"}', 'GET, HEAD'],
      ['POST', `/v1/api-keys/${key.id}`, { ...auth(token), ...JSON_TYPE, 'Content-Length': '1' }, '{', 'DELETE, PATCH'],
      [
        'PUT',
        `/api/v1/api-keys/${key.id}`,
        { ...auth(token), 'Content-Type': 'text/plain', 'Content-Length': '5' },
        'hello',
        'DELETE, PATCH',
      ],
    ];
    for (const [method, path, headers, body, allow] of cases) {
      const answer = await wire(app, method, path, headers, body);
      assert.equal(problemOf(answer, 405, 'method_not_allowed').instance, path);
      assert.equal(answer.headers.allow, allow);
    }
    assert.equal(await keysSnapshot(app.database), before, 'nothing changed');
  });

  it('answers QUERY without a Content-Type with 405 and Allow on a known path, 404 on an unknown one', async () => {
    const app = await h.app();
    const known = await wire(app, 'QUERY', '/v1/audit-events', {});
    problemOf(known, 405, 'method_not_allowed');
    assert.equal(known.headers.allow, 'GET, HEAD');
    const prefixed = await wire(app, 'QUERY', '/api/v1/api-keys', {});
    problemOf(prefixed, 405, 'method_not_allowed');
    assert.equal(prefixed.headers.allow, 'GET, HEAD, POST');
    problemOf(await wire(app, 'QUERY', '/v1/nothing-here', {}), 404, 'not_found');
  });
});

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

describe('page sizes', () => {
  it('serves size=10000 as 1000 on every listing of the document (merchants: 100000 as 10000), and refuses a size below 1', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const { api_key } = await issueKey(app, { user: 'lister@alpha.test', customerId: world.customerId });
    // A listing under a subscription (its deliveries) needs one; creation resolves no host name.
    const subscription = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { 'x-api-key': api_key },
      payload: {
        notification_url: 'https://hooks.example.com/feegate',
        notification_type: ['API_KEY_REVOKED'],
        secret_key: 'Whsec-Alpha-2026',
      },
    });
    assert.equal(subscription.statusCode, 201, subscription.body);
    const doc = await openapiDocument(app);
    const listings = operations(doc).filter((op) => op.parameters.some((p) => p.in === 'query' && p.name === 'size'));
    assert.ok(listings.length >= 4, `${listings.length} listings`);
    for (const op of listings) {
      // The merchant listing's maximum is the platform's (contract section 20).
      const max = /^\/v[12]\/merchants$/.test(op.path) ? 10000 : 1000;
      const size = op.parameters.find((p) => p.name === 'size')!.schema;
      assert.deepEqual(
        [size.type, size.minimum, size.maximum, size['x-clamp-maximum']],
        ['integer', 1, undefined, max],
        `${op.path} states size`,
      );
      assert.match(
        doc.paths[op.path].get.parameters.find((p: Schema) => p.name === 'size').description,
        new RegExp(`above ${max} .* served as ${max}`),
      );
      const required = Object.fromEntries(
        op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, p.example]),
      );
      const url = (value: string) =>
        fillPath(op.path, { id: json(subscription).id }) + queryString({ ...required, size: value });
      for (const [ask, served] of [
        [`${max * 10}`, max],
        [`${max + 1}`, max],
        [`${max}`, max],
        ['1', 1],
      ] as const) {
        const res = await app.inject({ url: url(ask), headers: { 'x-api-key': api_key } });
        assert.equal(res.statusCode, 200, `${op.path} size=${ask}: ${res.body}`);
        // GET /v1/users answers in the platform's shape: its page descriptor is `metadata`.
        const body = json(res);
        assert.equal((body.page ?? body.metadata).size, served, `${op.path} size=${ask}`);
      }
      for (const bad of ['0', '-1', '1e4', '10000.0']) {
        const res = await app.inject({ url: url(bad), headers: { 'x-api-key': api_key } });
        assert.equal(res.statusCode, 400, `${op.path} size=${bad}`);
        assert.deepEqual(
          json(res).errors.map((e: { field: string }) => e.field),
          ['size'],
        );
      }
    }
  });

  it('serves 1,000 of 1,005 payment plans for size=10000, and the other 5 on the next page', async () => {
    const { app, world, token } = await customerSession(h);
    await h.db.current.database.db.insert(paymentPlans).values(
      Array.from({ length: 1005 }, (_, i) => ({
        customerId: world.customerId,
        paymentMethod: 'CREDIT',
        cardBrand: 'VISA',
        term: i + 1,
        commission: '1.0000',
        isInternational: false,
        hasInstallments: true,
      })),
    );
    const first = json(await app.inject({ url: '/api/v1/payment-plans?size=10000', headers: bearer(token) }));
    assert.equal(first.page.size, 1000);
    assert.equal(first.data.length, 1000);
    const total = first.page.total_elements;
    assert.ok(total > 1000 && total <= 2000, `${total} plans: two pages`);
    const second = json(await app.inject({ url: '/v1/payment-plans?size=10000&page=1', headers: bearer(token) }));
    assert.deepEqual(second.page, { size: 1000, total_elements: total, total_pages: 2, number: 1 });
    const all = new Set([...first.data, ...second.data].map((m: { id: string }) => m.id));
    assert.equal(all.size, total, 'every plan once');
  });
});
