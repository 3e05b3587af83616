/**
 * OpenTelemetry traces (contract section 25), from the bundle `npm start` runs,
 * in a process of its own (the SDK registers global instrumentation): an OTLP/HTTP
 * receiver started here on 127.0.0.1 gets the spans of a request as a tree
 * (server → handler → statement), named by route template, continuing the
 * caller's traceparent, with no secret, header value or raw path; nothing arrives
 * with tracing off; an unreachable collector changes no answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { LOGIN, PARENT_SPAN_ID, SERVER_KIND, session, tracedServices } from '../helpers/traced-service.js';
import { waitFor } from '../helpers/wait.js';
import { SECRET, startReceiver } from '../helpers/webhooks.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CHANGE_TRACE_ID = '5c0a3f3577b34da6a3ce929d0e0e4737';
const REDIS_TRACE_ID = '6d1b4f3577b34da6a3ce929d0e0e4738';
const REDIS_URL = process.env.TEST_REDIS_URL;
/** The caller's traceparent on each session's login. */
const CALLER = `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`;

const serve = tracedServices();

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
function descendants(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  return childrenOf(spans, root).flatMap((child) => [child, ...descendants(spans, child)]);
}

describe('traces', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  it('exports each request as a tree: server span by route template, handler, statements; the traceparent continued; no secret', async () => {
    const service = await serve('on', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const { token, merchantId } = await session(service.base, CALLER);
    await waitFor(
      () => receiver.spans.some((s) => s.kind === SERVER_KIND && s.attributes['http.route'] === '/v1/merchants/:id'),
      'the read of the merchant arrives',
      { timeoutMs: 20_000 },
    );
    const { spans } = receiver;
    assert.ok(spans.every((s) => s.service === 'feegate'));

    const login = spans.find((s) => s.kind === SERVER_KIND && s.attributes['http.route'] === '/v1/login');
    assert.ok(login, 'the login has a server span');
    assert.equal(login.traceId, TRACE_ID, 'the caller trace continues');
    assert.equal(login.parentSpanId, PARENT_SPAN_ID);
    assert.equal(login.name, 'POST /v1/login');
    assert.ok(
      descendants(spans, login).some((s) => s.name === 'password.verify'),
      'password hashing has its span',
    );

    const read = spans.find((s) => s.kind === SERVER_KIND && s.attributes['http.route'] === '/v1/merchants/:id')!;
    assert.equal(read.name, 'GET /v1/merchants/:id');
    assert.notEqual(read.traceId, TRACE_ID, 'a request without traceparent starts its own trace');
    const below = descendants(spans, read);
    const handler = below.find((s) => s.name.startsWith('handler'));
    assert.ok(handler, `a handler span under the server span: ${below.map((s) => s.name).join(', ')}`);
    const statements = descendants(spans, handler).filter((s) => s.attributes['db.system'] === 'postgresql');
    assert.ok(statements.length > 0, 'statements under the handler');
    for (const statement of statements) {
      const text = String(statement.attributes['db.query.text'] ?? statement.attributes['db.statement']);
      assert.match(text, /\$1/, 'the statement text, its values as parameters');
      assert.ok(!text.includes(merchantId), 'never a value');
    }

    const everything = receiver.texts.join('\n');
    for (const secret of [token, LOGIN.password, merchantId, 'Bearer'])
      assert.ok(!everything.includes(secret), `${secret.slice(0, 12)}… is in no span`);
    for (const span of spans)
      for (const key of Object.keys(span.attributes))
        assert.doesNotMatch(key, /header|user_agent|url\.(path|full|query)|http\.target/);

    // Log lines written inside a request name its trace.
    await waitFor(
      () => /"trace_id":"[0-9a-f]{32}","span_id":"[0-9a-f]{16}"/.test(service.log()),
      'a log line with trace ids',
    );
    await service.stop();
  });

  it('traces each webhook delivery attempt on its own, linked to the request that wrote its event', async () => {
    const hooks = await startReceiver();
    const service = await serve('webhooks', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_HOSTS: hooks.host,
    });
    try {
      const { token } = await session(service.base, CALLER);
      const subscribed = await fetch(`${service.base}/v1/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ notification_url: hooks.url, notification_type: ['AUDIT_RECORD'], secret_key: SECRET }),
      });
      assert.equal(subscribed.status, 201);
      // The login's audit record is sent as an AUDIT_RECORD event: a change made under the caller's trace.
      const login = await fetch(`${service.base}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${CHANGE_TRACE_ID}-${PARENT_SPAN_ID}-01` },
        body: JSON.stringify(LOGIN),
      });
      assert.equal(login.status, 200);
      await hooks.waitFor(1);
      assert.ok(
        hooks.received.every((got) => !got.body.includes(CHANGE_TRACE_ID)),
        'the trace is not part of the event',
      );
      const linkedDelivery = () =>
        receiver.spans.find((s) => s.name === 'webhook.deliver' && s.links.some((l) => l.traceId === CHANGE_TRACE_ID));
      await waitFor(() => linkedDelivery() !== undefined, 'the delivery attempt is exported', { timeoutMs: 20_000 });
      const delivery = linkedDelivery()!;
      assert.equal(delivery.parentSpanId, '', 'a trace of its own');
      assert.notEqual(delivery.traceId, CHANGE_TRACE_ID);
      const [link] = delivery.links;
      assert.equal(link!.traceId, CHANGE_TRACE_ID, 'linked to the trace of the change');
      const linked = receiver.spans.find((s) => s.spanId === link!.spanId);
      assert.ok(linked, 'the linked span is one of the change');
      assert.equal(linked.traceId, CHANGE_TRACE_ID);
    } finally {
      await service.stop();
      await hooks.close();
    }
  });

  it('has a span for each Redis command, naming the command only', {
    skip: !REDIS_URL && 'TEST_REDIS_URL is not set',
  }, async () => {
    const service = await serve('redis', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      REDIS_URL: REDIS_URL!,
      REDIS_KEY_PREFIX: `traces-${process.pid}:`,
    });
    try {
      // A login counts its address's attempts in Redis, shared by every instance.
      await fetch(`${service.base}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${REDIS_TRACE_ID}-${PARENT_SPAN_ID}-01` },
        body: JSON.stringify(LOGIN),
      });
      const commandsOfLogin = () =>
        receiver.spans.filter(
          (s) =>
            s.traceId === REDIS_TRACE_ID && (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'redis',
        );
      await waitFor(() => commandsOfLogin().length > 0, 'a Redis span in the login trace', { timeoutMs: 20_000 });
      const commands = commandsOfLogin();
      for (const command of commands) {
        const statement = String(command.attributes['db.statement'] ?? command.attributes['db.query.text'] ?? '');
        assert.match(statement, /^[a-z]+$/i, `the command name only, not ${statement}`);
      }
      assert.ok(!receiver.texts.join('\n').includes(`traces-${process.pid}:`), 'no key is exported');
    } finally {
      await service.stop();
    }
  });

  it('exports nothing and loads no SDK with tracing off', async () => {
    const before = receiver.texts.length;
    const service = await serve('off', {});
    await session(service.base, CALLER);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(receiver.texts.length, before);
    assert.doesNotMatch(service.log(), /trace_id/);
    await service.stop();
  });

  it('answers the same with a collector that cannot be reached', async () => {
    const closed = await freePort();
    const unreachable = await serve('unreachable', {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const off = await serve('reachable-off', {});
    const withCollectorGone = await session(unreachable.base, CALLER);
    const withoutTracing = await session(off.base, CALLER);
    assert.deepEqual(withCollectorGone.answers, withoutTracing.answers);
    await unreachable.stop();
    await off.stop();
  });
});
