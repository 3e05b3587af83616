/**
 * Head sampling (contract section 25: OTEL_TRACES_SAMPLER honoured; src/lib/tracing-head-sampling.ts):
 * the configured sampler decides before the Fastify instrumentation starts a span. The sampled share
 * is the configured ratio, not its square; each sampled request is a whole tree; nothing of a request
 * that was not sampled is exported (no handler, statement or hashing span as a trace of its own); a
 * caller's sampled traceparent is still continued; and the log lines of a request that was not sampled
 * still carry trace ids, the caller's when it sent one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { samplerFromEnv } from '../../src/lib/tracing-head-sampling.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { LOGIN, PARENT_SPAN_ID, SERVER_KIND, session, tracedServices } from '../helpers/traced-service.js';
import { waitFor } from '../helpers/wait.js';

const serve = tracedServices();
const SAMPLED_TRACE_ID = '7e2c5f3577b34da6a3ce929d0e0e4739';
const UNSAMPLED_TRACE_ID = '8f3d6a3577b34da6a3ce929d0e0e4740';
const READS = 400;

describe('head sampling', () => {
  it('builds the sampler from OTEL_TRACES_SAMPLER as the SDK does, and names what it falls back from', () => {
    const built = (env: Record<string, string>) => {
      const { sampler, problem } = samplerFromEnv(env);
      return [sampler.toString(), problem];
    };
    const parentBased = (root: string) =>
      `ParentBased{root=${root}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}`;
    assert.deepEqual(built({}), [parentBased('AlwaysOnSampler'), undefined]);
    assert.deepEqual(built({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }), [
      parentBased('TraceIdRatioBased{0.25}'),
      undefined,
    ]);
    assert.deepEqual(built({ OTEL_TRACES_SAMPLER: 'always_off' }), ['AlwaysOffSampler', undefined]);
    assert.deepEqual(built({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }), [
      'TraceIdRatioBased{1}',
      'OTEL_TRACES_SAMPLER_ARG="2" is blank or outside [0..1], defaulting to 1',
    ]);
    assert.deepEqual(built({ OTEL_TRACES_SAMPLER: 'bogus' }), [
      parentBased('AlwaysOnSampler'),
      'unknown OTEL_TRACES_SAMPLER value "bogus", using default',
    ]);
  });

  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  const tracingAt = (ratio: string) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_BSP_MAX_QUEUE_SIZE: '10000',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: ratio,
  });

  it('samples the configured share of requests, each a whole tree, and exports nothing of the others', async () => {
    // @fastify/otel's own glob of paths never traced holds beside the sampler.
    const service = await serve('half', { ...tracingAt('0.5'), OTEL_FASTIFY_IGNORE_PATHS: '/v1/ignored/*' });
    try {
      const { token, merchantId } = await session(service.base);
      // Ten batch periods: the session's spans are all in before the count starts.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      receiver.spans.length = 0;
      for (let i = 0; i < READS; i++) {
        const read = await fetch(`${service.base}/v1/merchants/${merchantId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(read.status, 200);
      }
      // A caller that did not sample, and paths no route serves: never a trace, never a root of their own.
      for (let i = 0; i < 20; i++) {
        const read = await fetch(`${service.base}/v1/merchants/${merchantId}`, {
          headers: { authorization: `Bearer ${token}`, traceparent: `00-${UNSAMPLED_TRACE_ID}-${PARENT_SPAN_ID}-00` },
        });
        assert.equal(read.status, 200);
        assert.equal((await fetch(`${service.base}/v1/no-such-thing/${i}`, { method: 'DELETE' })).status, 404);
        assert.equal((await fetch(`${service.base}/v1/ignored/${i}`)).status, 404);
      }
      const reads = () =>
        receiver.spans.filter((s) => s.kind === SERVER_KIND && s.attributes['http.route'] === '/v1/merchants/:id');
      // The batch export runs every 100 ms: once the count holds still, everything has arrived.
      let seen = -1;
      await waitFor(
        async () => {
          const now = reads().length;
          const still = now === seen && now > 0;
          seen = now;
          return still;
        },
        'the sampled reads arrive',
        { timeoutMs: 20_000, intervalMs: 1000 },
      );
      const sampled = reads().length;
      // 400 reads at 0.5: 200 ± 10 (one standard deviation); deciding twice would give 100 ± 8.7.
      assert.ok(sampled >= 150 && sampled <= 250, `${sampled} of ${READS} reads sampled at 0.5`);

      const { spans } = receiver;
      assert.ok(!spans.some((s) => s.traceId === UNSAMPLED_TRACE_ID), 'the caller said not to sample');
      const unrouted = spans.filter((s) => s.kind === SERVER_KIND && s.attributes['http.route'] === undefined);
      assert.ok(
        unrouted.some((s) => s.name === 'DELETE'),
        'some of the 20 unknown paths are sampled',
      );
      assert.deepEqual(
        unrouted.filter((s) => s.name !== 'DELETE').map((s) => s.name),
        [],
        'none of the paths in the glob',
      );
      const traces = new Set(spans.map((s) => s.traceId));
      for (const traceId of traces) {
        const roots = spans.filter((s) => s.traceId === traceId && s.parentSpanId === '');
        assert.equal(roots.length, 1, `trace ${traceId} has one root`);
        assert.equal(roots[0]!.kind, SERVER_KIND, `the root of ${traceId} is a server span, not ${roots[0]!.name}`);
      }
      for (const read of reads()) {
        const handler = spans.find((s) => s.parentSpanId === read.spanId && s.name.startsWith('handler'));
        assert.ok(handler, 'each sampled read has its handler span');
        assert.ok(
          spans.some((s) => s.parentSpanId === handler.spanId && s.attributes['db.system'] === 'postgresql'),
          'and its statements under it',
        );
      }
    } finally {
      await service.stop();
    }
  });

  it("continues a caller's sampled trace, exports nothing of one it was told not to sample, and logs the ids of both", async () => {
    const service = await serve('none', { ...tracingAt('0'), LOG_LEVEL: 'info' });
    receiver.spans.length = 0;
    try {
      const sampledLogin = randomUUID();
      const login = await fetch(`${service.base}/v1/login`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-request-id': sampledLogin,
          traceparent: `00-${SAMPLED_TRACE_ID}-${PARENT_SPAN_ID}-01`,
        },
        body: JSON.stringify(LOGIN),
      });
      assert.equal(login.status, 200);
      const token = ((await login.json()) as { token: { access_token: string } }).token.access_token;
      const unsampled = randomUUID();
      const own = randomUUID();
      for (const [requestId, traceparent] of [
        [unsampled, `00-${UNSAMPLED_TRACE_ID}-${PARENT_SPAN_ID}-00`],
        [own, undefined],
      ] as const) {
        const answer = await fetch(`${service.base}/v1/merchants?size=1`, {
          headers: {
            authorization: `Bearer ${token}`,
            'x-request-id': requestId,
            ...(traceparent ? { traceparent } : {}),
          },
        });
        assert.equal(answer.status, 200);
      }
      await waitFor(
        () => receiver.spans.some((s) => s.traceId === SAMPLED_TRACE_ID && s.name === 'password.verify'),
        "the caller's sampled trace arrives, hashing included",
        { timeoutMs: 20_000 },
      );
      // Another batch period: anything of the unsampled requests would have been exported by now.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const others = receiver.spans.filter((s) => s.traceId !== SAMPLED_TRACE_ID);
      assert.deepEqual(
        others.map((s) => s.name),
        [],
        'nothing else: no handler, statement or hashing span of its own',
      );

      const idsLogged = (requestId: string) =>
        service
          .log()
          .split('\n')
          .filter((line) => line.includes(`"reqId":"${requestId}"`) && line.includes('"trace_id"'))
          .map((line) => JSON.parse(line) as { trace_id: string; span_id: string });
      await waitFor(() => idsLogged(own).length > 0, 'the log lines of the requests');
      for (const { trace_id, span_id } of idsLogged(unsampled)) {
        assert.equal(trace_id, UNSAMPLED_TRACE_ID, "a request told not to sample logs the caller's trace");
        assert.equal(span_id, PARENT_SPAN_ID);
      }
      assert.ok(idsLogged(unsampled).length > 0);
      for (const { trace_id, span_id } of idsLogged(own)) {
        assert.match(trace_id, /^[0-9a-f]{32}$/, 'a request sampled out still logs a trace id');
        assert.match(span_id, /^[0-9a-f]{16}$/);
        assert.notEqual(trace_id, UNSAMPLED_TRACE_ID);
      }
      assert.ok(idsLogged(sampledLogin).length > 0);
      assert.ok(idsLogged(sampledLogin).every((line) => line.trace_id === SAMPLED_TRACE_ID));
    } finally {
      await service.stop();
    }
  });
});
