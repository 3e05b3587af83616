/**
 * Real integrations, unchanged: what the platform's own clients send on the
 * wire works here too (docs/api.md, "Integrations moving from the platform").
 * Requests are written byte for byte over a socket where fetch or inject would
 * tidy them (a Content-Type with no body, Content-Length: 0, QUERY).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { keysSnapshot, whoAmI } from '../helpers/api-keys.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey, loginAs, uuid } from '../helpers/fixtures.js';
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
