/** REQUEST_TIMEOUT_SECONDS and idle keep-alive connections (docs/production.md#timeouts-at-a-glance), over real sockets. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { keysSnapshot } from '../helpers/api-keys.js';
import { useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { openSocket, portOf, readUntilClosed, type RawAnswer } from '../helpers/raw-http.js';

const h = useTestApp();
const TIMEOUT_SECONDS = 1;
/** docs/production.md: answered and closed within a second of the deadline; the test allows two. */
const LATEST_MS = (TIMEOUT_SECONDS + 2) * 1000;

function assertTimedOut(res: RawAnswer): void {
  assert.equal(res.status, 408);
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.equal(res.headers.connection, 'close');
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.equal(body.code, 'request_timeout');
  assert.equal(body.status, 408);
  assert.ok(
    res.closedAfterMs >= TIMEOUT_SECONDS * 1000 - 100,
    `not before the deadline (${Math.round(res.closedAfterMs)} ms)`,
  );
  assert.ok(res.closedAfterMs <= LATEST_MS, `within 2 s after the deadline (${Math.round(res.closedAfterMs)} ms)`);
}

describe('request timeout', () => {
  it('is read from REQUEST_TIMEOUT_SECONDS: 30 s by default, a whole number of seconds from 1 to 3600', () => {
    assert.equal(loadConfig({}).requestTimeoutSeconds, 30);
    assert.equal(loadConfig({ REQUEST_TIMEOUT_SECONDS: '5' }).requestTimeoutSeconds, 5);
    assert.throws(
      () => loadConfig({ REQUEST_TIMEOUT_SECONDS: 'soon' }),
      (err: Error) => err instanceof ConfigError && /REQUEST_TIMEOUT_SECONDS must be a whole number/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ REQUEST_TIMEOUT_SECONDS: '0' }),
      /REQUEST_TIMEOUT_SECONDS must be between 1 and 3600/,
    );
  });

  it('answers 408 request_timeout and closes when the headers have not all arrived in time', async () => {
    const app = await h.app({ requestTimeoutSeconds: TIMEOUT_SECONDS });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const socket = await openSocket(portOf(app));
    const answer = readUntilClosed(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    assertTimedOut(await answer);
  });

  it('answers 408 request_timeout and closes when the body has not all arrived in time; nothing changes', async () => {
    const { app, token, world } = await customerSession(h, { requestTimeoutSeconds: TIMEOUT_SECONDS });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const before = await keysSnapshot(app.database);
    const body = JSON.stringify({ user: 'late@alpha.test', customer_id: world.customerId });
    const socket = await openSocket(portOf(app));
    const answer = readUntilClosed(socket);
    socket.write(
      `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, -5)}`,
    );
    assertTimedOut(await answer);
    assert.equal(await keysSnapshot(app.database), before, 'no key was created');
  });

  it('lets a slow but timely request through', async () => {
    const app = await h.app({ requestTimeoutSeconds: 2 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const socket = await openSocket(portOf(app));
    const answer = readUntilClosed(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.write('Connection: close\r\n\r\n');
    const res = await answer;
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).status, 'ok');
  });

  it('closes an idle keep-alive connection after 5 s', async () => {
    const app = await h.app();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const socket = await openSocket(portOf(app));
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const [first] = (await once(socket, 'data')) as [Buffer];
    assert.match(first.toString(), /^HTTP\/1\.1 200/);
    assert.match(first.toString(), /Keep-Alive: timeout=5/i);
    const idleSince = performance.now();
    await once(socket, 'close');
    const idleMs = performance.now() - idleSince;
    assert.ok(idleMs >= 4500 && idleMs <= 7000, `closed after ${Math.round(idleMs)} ms idle`);
  });
});
