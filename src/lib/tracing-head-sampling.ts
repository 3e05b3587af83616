/**
 * Head sampling before the Fastify instrumentation's per-request work (loaded
 * with the SDK, tracing-sdk.ts). @fastify/otel starts a request span, a handler
 * span and a context for every request, sampled or not, and that path alone cost
 * key auth about a fifth of its rate (docs/performance.md, line 2d). So a hook
 * that runs before @fastify/otel's asks the SDK's own sampler first, with the
 * caller's traceparent and the trace id the request span would get: a request it
 * would not record gets no span and no context at all, and for one it samples,
 * that trace id is handed to the SDK's next root span, so the SDK decides the
 * same (its samplers are deterministic in the parent and the trace id) and the
 * sampled share stays the configured ratio, not its square.
 */
import { subscribe } from 'node:diagnostics_channel';
import * as api from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, as the Node SDK
 * builds it (its builder is not exported, and the gate needs the same instance):
 * unknown names and ratios outside [0, 1] fall back as the SDK's do, and `problem` is
 * what the SDK would tell its diagnostic log about them.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): { sampler: Sampler; problem?: string } {
  const name = env.OTEL_TRACES_SAMPLER?.trim();
  const given = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const parsed = given ? Number(given) : Number.NaN;
  const ratio = parsed >= 0 && parsed <= 1 ? parsed : 1;
  const ratioProblem =
    ratio === parsed
      ? undefined
      : `OTEL_TRACES_SAMPLER_ARG="${given ?? ''}" is blank or outside [0..1], defaulting to 1`;
  switch (name) {
    case 'always_on':
      return { sampler: new AlwaysOnSampler() };
    case 'always_off':
      return { sampler: new AlwaysOffSampler() };
    case 'traceidratio':
      return { sampler: new TraceIdRatioBasedSampler(ratio), problem: ratioProblem };
    case 'parentbased_always_off':
      return { sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }) };
    case 'parentbased_traceidratio':
      return { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }), problem: ratioProblem };
    default:
      return {
        sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
        problem:
          name && name !== 'parentbased_always_on'
            ? `unknown OTEL_TRACES_SAMPLER value "${name}", using default`
            : undefined,
      };
  }
}

/** The ids a log line of a request that was not sampled carries; the span id is made at its first line. */
interface SkippedLogIds {
  trace_id: string;
  span_id: string;
}

/**
 * On the logger of a request that was not sampled (Fastify makes one a request; pino's mixin sees the logger,
 * not the request), so that a child of it finds them too. A property, not a WeakMap keyed by the logger: an
 * entry a request, with its ephemeron work in the collector, cost about 1.1 microseconds (a tight loop, Node 20).
 */
const kSkippedLogIds = Symbol('feegate.skippedLogIds');
type MarkedLogger = { [kSkippedLogIds]?: SkippedLogIds };
const logIdsRandom = new RandomIdGenerator();

/** The trace ids of a log line written through the logger of a request that was not sampled. */
export function skippedRequestLogIds(logger: unknown): SkippedLogIds | undefined {
  const ids = (logger as MarkedLogger | undefined)?.[kSkippedLogIds];
  if (ids && !ids.span_id) ids.span_id = logIdsRandom.generateSpanId();
  return ids;
}

type Handler = (this: unknown, request: FastifyRequest, reply: unknown) => unknown;

export function createHeadSampling(env: NodeJS.ProcessEnv) {
  const { sampler, problem } = samplerFromEnv(env);
  const random = new RandomIdGenerator();
  const unwrapped = new WeakMap<RouteOptions, Handler>();
  /** Set only while @fastify/otel's request hook runs inside the gate's `done()`. */
  let skipping = false;
  let nextTraceId: string | undefined;

  const idGenerator: IdGenerator = {
    generateTraceId: () => {
      const handed = nextTraceId;
      nextTraceId = undefined;
      return handed ?? random.generateTraceId();
    },
    generateSpanId: () => random.generateSpanId(),
  };

  function gate(request: FastifyRequest, _reply: unknown, done: () => void): void {
    const parentContext = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
    const parent = api.trace.getSpanContext(parentContext);
    const traceId = parent && api.trace.isSpanContextValid(parent) ? parent.traceId : random.generateTraceId();
    const { decision } = sampler.shouldSample(parentContext, traceId, 'request', api.SpanKind.SERVER, {}, []);
    if (decision === api.SamplingDecision.NOT_RECORD) {
      // The caller's ids when it sent a traceparent, else the trace id just drawn and a span id made when logged.
      const spanId = parent?.traceId === traceId ? parent.spanId : '';
      (request.log as MarkedLogger)[kSkippedLogIds] = { trace_id: traceId, span_id: spanId };
      skipping = true;
    } else if (traceId !== parent?.traceId) {
      nextTraceId = traceId;
    }
    // Fastify runs the next onRequest hook (@fastify/otel's) inside done(): the state is its alone.
    try {
      done();
    } finally {
      skipping = false;
      nextTraceId = undefined;
    }
  }

  return {
    sampler,
    /** For the SDK's diagnostic log, once it has one. */
    samplerProblem: problem,
    idGenerator,
    /** For @fastify/otel's `ignorePaths`: whether the request now starting was not sampled. */
    ignoresThisRequest: () => skipping,
    /**
     * Call before constructing @fastify/otel: the gate runs ahead of its request hook, and each route's own
     * handler is kept before @fastify/otel wraps it in a handler span.
     */
    installBefore(): void {
      subscribe('fastify.initialization', (message) => {
        const { fastify } = message as { fastify: FastifyInstance };
        fastify.addHook('onRequest', gate);
        fastify.addHook('onRoute', (route) => void unwrapped.set(route, route.handler as Handler));
      });
    },
    /** Call after: a request that was not sampled calls the route's own handler, not the wrapper (no span, no context). */
    installAfter(): void {
      subscribe('fastify.initialization', (message) => {
        (message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route) => {
          const own = unwrapped.get(route);
          const traced = route.handler as Handler;
          if (!own || own === traced) return;
          route.handler = function (this: unknown, request: FastifyRequest, reply: unknown) {
            return ((request.log as MarkedLogger)[kSkippedLogIds] ? own : traced).call(this, request, reply);
          } as typeof route.handler;
        });
      });
    },
  };
}
