/** Prometheus metrics on their own port (docs/operations.md#metrics). */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { useTestApp } from '../helpers/app.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

function portOf(server: { address(): unknown } | null): number {
  return (server!.address() as { port: number }).port;
}

/** The value of one series in the exposition text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(port: number): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** A client that sends part of a login and hangs up before any answer. */
async function hangUpDuringLogin(apiPort: number): Promise<void> {
  const socket = connect(apiPort, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    'POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user":',
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.destroy();
}

describe('metrics', () => {
  it('serves /metrics on METRICS_PORT with the listed series, and not on the API port', async () => {
    const { app, world, token } = await customerSession(h, { metricsPort: 0 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const apiPort = portOf(app.server);
    const metricsPort = portOf(app.metricsServer);
    assert.notEqual(metricsPort, apiPort);

    // Traffic of every kind the series describe.
    const key = (await issueKey(app, { user: 'metrics@alpha.test', customerId: world.customerId })).api_key;
    const api = (path: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${apiPort}${path}`, init);
    assert.equal((await api('/v1/users/me', { headers: { 'x-api-key': key } })).status, 200);
    assert.equal((await api('/v1/users/me', { headers: { 'x-api-key': key } })).status, 200); // from the key cache
    // Another last character: replacing it with a fixed one kept the key whenever it already ended so (1 run in 62).
    const wrongKey = `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`;
    assert.equal((await api('/v1/users/me', { headers: { 'x-api-key': wrongKey } })).status, 401);
    // Under the platform's base path: the same route, one series.
    assert.equal((await api('/api/v1/users/me', { headers: { authorization: `Bearer ${token}` } })).status, 200);
    const badLogin = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: world.login.user, password: 'wrong-password' }),
    };
    assert.equal((await api('/v1/login', badLogin)).status, 401);
    assert.equal((await api('/no/such/route')).status, 404);
    await hangUpDuringLogin(apiPort);

    let text = '';
    await waitFor(async () => {
      text = (await scrape(metricsPort)).text;
      return sample(text, 'feegate_http_requests_total{route="/v1/login",method="POST",status="499"}') === 1;
    }, 'the login whose client hung up is counted as 499');

    const { status, type } = await scrape(metricsPort);
    assert.equal(status, 200);
    assert.match(type ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(text, 'feegate_http_requests_total{route="/v1/users/me",method="GET",status="200"}'), 3);
    assert.equal(sample(text, 'feegate_http_requests_total{route="/v1/users/me",method="GET",status="401"}'), 1);
    assert.equal(sample(text, 'feegate_http_requests_total{route="/v1/login",method="POST",status="200"}'), 1); // customerSession's, by inject
    assert.equal(sample(text, 'feegate_http_requests_total{route="unmatched",method="GET",status="404"}'), 1);
    assert.equal(
      sample(text, 'feegate_http_request_duration_seconds_count{route="/v1/users/me",method="GET",status="200"}'),
      3,
    );
    assert.ok(
      sample(
        text,
        'feegate_http_request_duration_seconds_bucket{le="10",route="/v1/users/me",method="GET",status="200"}',
      ) === 3,
    );
    assert.equal(sample(text, 'feegate_api_key_verifications_total{outcome="valid"}'), 2);
    assert.equal(sample(text, 'feegate_api_key_verifications_total{outcome="invalid"}'), 1);
    assert.equal(sample(text, 'feegate_logins_total{outcome="success"}'), 1);
    assert.equal(sample(text, 'feegate_logins_total{outcome="invalid_credentials"}'), 1);
    assert.equal(sample(text, 'feegate_logins_total{outcome="client_closed"}'), 1);
    assert.equal(sample(text, 'feegate_login_queue_depth'), 0);
    assert.ok(sample(text, 'feegate_cache_lookups_total{cache="api_keys",result="hit"}')! >= 1);
    assert.ok(sample(text, 'feegate_cache_lookups_total{cache="api_keys",result="miss"}')! >= 1);
    for (const series of [
      'feegate_db_pool_connections',
      'feegate_db_pool_idle_connections',
      'feegate_db_pool_waiting_requests',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.notEqual(sample(text, series), undefined, `${series} is exported`);
    }
    if (app.database.driver === 'postgres')
      assert.ok(sample(text, 'feegate_db_pool_connections')! >= 1, 'the pool is measured');

    // Never on the API port; nothing else on the metrics port.
    assert.equal((await api('/metrics')).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status, 404);

    await app.close();
    await assert.rejects(scrape(metricsPort), 'the metrics listener closes with the app');
  });

  it('is off unless METRICS_PORT is set', async () => {
    const app = await h.app();
    assert.equal(app.metricsServer, null);
    assert.equal((await app.inject({ url: '/metrics' })).statusCode, 404);
  });

  it('reads METRICS_PORT and METRICS_HOST from the environment and refuses the API port', () => {
    assert.equal(loadConfig({}).metricsPort, undefined);
    assert.deepEqual(
      [loadConfig({ METRICS_PORT: '9464' }).metricsPort, loadConfig({ METRICS_PORT: '9464' }).metricsHost],
      [9464, '127.0.0.1'],
    );
    assert.equal(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metricsHost, '0.0.0.0');
    assert.throws(
      () => loadConfig({ METRICS_PORT: 'nine' }),
      (err: Error) => err instanceof ConfigError && /METRICS_PORT must be a whole number/.test(err.message),
    );
    assert.throws(() => loadConfig({ METRICS_PORT: '0' }), /METRICS_PORT must be between 1 and 65535/);
    assert.throws(() => loadConfig({ METRICS_PORT: '3000' }), /METRICS_PORT must differ from PORT \(3000\)/);
    assert.throws(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' }), /never served on the API port/);
  });
});
