/** Errors raised before a route runs are problem details with a code, and echo little of the input (docs/api.md#conventions). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keysSnapshot } from '../helpers/api-keys.js';
import { bearer, json, useTestApp, type Injected } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { portOf, rawExchange, type RawAnswer } from '../helpers/raw-http.js';

const h = useTestApp();
const LONG = 'a'.repeat(10_000);
/** docs/api.md#conventions: no answer carries more than 200 characters of the input. */
const TOO_MUCH_ECHO = 'a'.repeat(201);

function assertProblem(res: Injected | RawAnswer, status: number, code: string): Record<string, any> {
  const headers = res.headers as Record<string, unknown>;
  const raw = res.body;
  assert.equal('statusCode' in res ? res.statusCode : res.status, status);
  assert.match(String(headers['content-type']), /^application\/problem\+json/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  const body = JSON.parse(raw) as Record<string, any>;
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.type, `https://feegate.dev/problems/${code}`);
  assert.equal(typeof body.request_id, 'string');
  assert.ok(!raw.includes(TOO_MUCH_ECHO), 'echoes at most 200 characters of the input');
  return body;
}

describe('errors before a route', () => {
  it('answer a path parameter over 100 characters with 414 uri_too_long, echoing a little of it', async () => {
    const app = await h.app();
    const res = await app.inject({ method: 'DELETE', url: `/v1/api-keys/${'a'.repeat(300)}` });
    const body = assertProblem(res, 414, 'uri_too_long');
    assert.ok(String(body.instance).startsWith('/v1/api-keys/aaa'));
    assert.ok(String(body.instance).length <= 100);
    assert.equal(res.headers['x-request-id'], body.request_id);
  });

  it('answer a long unknown path with 404 not_found, echoing a little of it', async () => {
    const app = await h.app();
    const res = await app.inject({ method: 'GET', url: `/${LONG}` });
    assertProblem(res, 404, 'not_found');
    assert.ok(res.body.length < 600, `a short answer, got ${res.body.length} characters`);
  });

  it('name an unknown query parameter of 10,000 characters by its first few only', async () => {
    const { app, token } = await customerSession(h);
    const body = assertProblem(
      await app.inject({ url: `/v1/merchants?${LONG}=1`, headers: bearer(token) }),
      400,
      'validation_failed',
    );
    assert.ok(body.errors[0].field.startsWith('aaa'));
  });

  it('answer undecodable percent-encoding in a path parameter with 400 malformed_url', async () => {
    const app = await h.app();
    assertProblem(await app.inject({ method: 'DELETE', url: '/v1/api-keys/%E0%A4%A' }), 400, 'malformed_url');
  });

  it('answer a known path with a method it lacks with 405 method_not_allowed and Allow; nothing changes', async () => {
    const { app, token, world } = await customerSession(h);
    const me = await app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { user: 'x' } });
    assert.equal(assertProblem(me, 405, 'method_not_allowed').instance, '/v1/users/me');
    // Only the route of the path itself: PATCH /v1/users/{id} is a parametric neighbour, not this path's.
    assert.equal(me.headers.allow, 'GET, HEAD');

    const before = await keysSnapshot(app.database);
    const keys = await app.inject({
      method: 'PUT',
      url: '/v1/api-keys',
      headers: bearer(token),
      payload: { user: 'k@alpha.test', customer_id: world.customerId },
    });
    assertProblem(keys, 405, 'method_not_allowed');
    assert.equal(keys.headers.allow, 'GET, HEAD, POST');
    const oneKey = await app.inject({
      method: 'POST',
      url: '/v1/api-keys/3f0c2a8e-5b1d-4c6e-9a7f-2d8b4e6c1a90',
      headers: bearer(token),
      payload: {},
    });
    assertProblem(oneKey, 405, 'method_not_allowed');
    assert.equal(oneKey.headers.allow, 'DELETE, PATCH');
    assert.equal(await keysSnapshot(app.database), before, 'nothing changed');

    // An unknown path stays 404, whatever the method.
    assertProblem(await app.inject({ method: 'PUT', url: '/v1/people/you' }), 404, 'not_found');
  });

  it('answer a static path with a method only its parametric neighbour has with 405 and its own Allow; nothing changes', async () => {
    const { app, token } = await customerSession(h);
    const before = await keysSnapshot(app.database);
    for (const [method, url, allow] of [
      ['PATCH', '/v1/users/me', 'GET, HEAD'],
      ['PATCH', '/api/v1/users/me', 'GET, HEAD'],
      ['DELETE', '/v1/fee-rules/scheduled-changes', 'GET, HEAD'],
      ['DELETE', '/v1/fee-rules/bulk-assign', 'POST'],
      ['DELETE', '/api/v1/fee-rules/bulk-assign', 'POST'],
    ] as const) {
      const res = await app.inject({ method, url, headers: bearer(token), payload: { name: 'x', role: 'VIEWER' } });
      assertProblem(res, 405, 'method_not_allowed');
      assert.equal(res.headers.allow, allow, `${method} ${url}`);
    }
    // Without credentials too: the method is judged before the caller.
    assertProblem(await app.inject({ method: 'PATCH', url: '/v1/users/me' }), 405, 'method_not_allowed');
    assert.equal(await keysSnapshot(app.database), before, 'nothing changed');
    // The parametric route still serves its own paths.
    const notAUuid = await app.inject({
      method: 'PATCH',
      url: '/v1/users/someone',
      headers: bearer(token),
      payload: {},
    });
    assert.equal(notAUuid.statusCode, 400);
  });

  it('keep malformed JSON 400, a text body 415 and a body over the limit 413 as problem details', async () => {
    const { app, token } = await customerSession(h, { bodyLimitBytes: 1024 });
    const before = await keysSnapshot(app.database);
    const post = (payload: string, type = 'application/json') =>
      app.inject({ method: 'POST', url: '/v1/api-keys', headers: { ...bearer(token), 'content-type': type }, payload });
    assertProblem(await post('{"user":'), 400, 'malformed_json');
    assertProblem(await post('user=x', 'text/plain'), 415, 'unsupported_media_type');
    assertProblem(await post(JSON.stringify({ user: LONG })), 413, 'payload_too_large');
    assert.equal(await keysSnapshot(app.database), before, 'nothing changed');
  });

  it('answer 20 KB of request headers with 431 request_header_fields_too_large on the socket, and close it', async () => {
    const app = await h.app();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const res = await rawExchange(
      portOf(app),
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assertProblem(res, 431, 'request_header_fields_too_large');
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
  });

  it('answer a request that is not HTTP with 400 malformed_request on the socket, and close it', async () => {
    const app = await h.app();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const res = await rawExchange(portOf(app), `GARBAGE ${LONG}\r\n\r\n`);
    assertProblem(res, 400, 'malformed_request');
    assert.equal(res.headers.connection, 'close');
    // The server still answers.
    assert.equal(json(await app.inject({ method: 'GET', url: '/health' })).status, 'ok');
  });
});
