/**
 * The OpenTelemetry SDK, loaded by tracing.ts only when traces are configured.
 * The official instrumentations of HTTP, Fastify, `pg` and ioredis; the
 * exporter, sampler and batch limits from the standard OTEL_* variables; spans
 * leave through a bounded queue whose drops are counted
 * (feegate_trace_spans_dropped_total), so a collector that is slow or gone never
 * holds up a request. Attributes that could carry a raw path with ids, a query
 * or a header value are removed before export.
 */
import { register } from 'node:module';
import * as api from '@opentelemetry/api';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { Minimatch } from 'minimatch';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { traceSpansDropped } from './metrics.js';
import { createHeadSampling } from './tracing-head-sampling.js';

export { skippedRequestLogIds } from './tracing-head-sampling.js';

/** Attributes the instrumentations set that may hold a raw path, a query or a header value: never exported. */
const UNSAFE_ATTRIBUTES = [
  'url.path',
  'url.full',
  'url.query',
  'http.target',
  'http.url',
  'user_agent.original',
  'http.user_agent',
  'net.peer.name',
  'http.host',
];
const HEADER_ATTRIBUTE = /^http\.(request|response)\.header\./;

/** A positive integer OTEL_BSP_* setting, or the specification's default. */
function batchSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

async function exporterFromEnv(env: NodeJS.ProcessEnv): Promise<SpanExporter> {
  if (env.OTEL_TRACES_EXPORTER?.trim() === 'console') return new ConsoleSpanExporter();
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if (protocol === 'http/json')
    return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  if (protocol === 'grpc') return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

/** Removes the unsafe attributes, then hands the span to a bounded batch export that counts what it drops. */
class SafeBoundedProcessor implements SpanProcessor {
  private pending = 0;
  private readonly batch: BatchSpanProcessor;

  private readonly bound: number;

  constructor(exporter: SpanExporter, env: NodeJS.ProcessEnv) {
    this.bound = batchSetting(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
    const counted: SpanExporter = {
      export: (spans, done) =>
        exporter.export(spans, (result) => {
          this.pending -= spans.length;
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
    this.batch = new BatchSpanProcessor({
      exporter: counted,
      maxQueueSize: this.bound,
      maxExportBatchSize: Math.min(this.bound, batchSetting(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512)),
      scheduledDelayMillis: batchSetting(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
      exportTimeoutMillis: batchSetting(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30000),
    });
  }

  onStart(span: Span, parent: api.Context): void {
    this.batch.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    if (!(span.spanContext().traceFlags & api.TraceFlags.SAMPLED)) return;
    const attributes = span.attributes as Record<string, unknown>;
    for (const name of Object.keys(attributes))
      if (UNSAFE_ATTRIBUTES.includes(name) || HEADER_ATTRIBUTE.test(name)) delete attributes[name];
    if (this.pending >= this.bound) {
      traceSpansDropped.inc();
      return;
    }
    this.pending++;
    this.batch.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.batch.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.batch.shutdown();
  }
}

/** A server span is named by its method and route template (never the raw path, which holds ids). */
function serverSpanName(request: { method: string; routeOptions: { url?: string | undefined } }): string {
  return request.routeOptions.url ? `${request.method} ${request.routeOptions.url}` : request.method;
}

let sdk: NodeSDK | undefined;

export async function startSdk(env: NodeJS.ProcessEnv = process.env): Promise<typeof api> {
  // ESM imports (pg's, through the PostgreSQL driver's module) reach the instrumentations only through
  // this loader hook (@opentelemetry/instrumentation's README, "Instrumentation for ECMAScript Modules");
  // ioredis is required (lib/shared-counters.ts), which the require hook sees.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  env.OTEL_SERVICE_NAME ??= 'feegate';
  const head = createHeadSampling(env);
  // Compiled once here, where @fastify/otel compiles its glob again on each request.
  const ignored = env.OTEL_FASTIFY_IGNORE_PATHS ? new Minimatch(env.OTEL_FASTIFY_IGNORE_PATHS) : undefined;
  head.installBefore();
  const fastifyInstrumentation = new FastifyOtelInstrumentation({
    registerOnInitialization: true,
    instrumentHooks: false,
    // A request the sampler would not record gets no span and no context (tracing-head-sampling.ts);
    // @fastify/otel's own OTEL_FASTIFY_IGNORE_PATHS glob, which a function given here replaces, still holds.
    ignorePaths: (route) => head.ignoresThisRequest() || ignored?.match(route.url) === true,
    requestHook: (span, request) => span.updateName(serverSpanName(request)),
  });
  head.installAfter();
  sdk = new NodeSDK({
    sampler: head.sampler,
    idGenerator: head.idGenerator,
    // Traces only: metrics are Prometheus's (/metrics), logs go to stdout.
    metricReaders: [],
    logRecordProcessors: [],
    spanProcessors: [new SafeBoundedProcessor(await exporterFromEnv(env), env)],
    instrumentations: [
      // Outgoing requests only (webhook deliveries). The server span is @fastify/otel's: the HTTP
      // instrumentation's own binds each request's and answer's emitters to the context, and with it
      // key auth read 0.33 of its untraced rate instead of 0.52 (docs/performance.md, line 2d).
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }),
      // The request and its handler, not a span per lifecycle hook: those cost key auth about half its throughput.
      fastifyInstrumentation,
      // Statement text only: values are parameters, never exported. Only inside a span: a statement
      // of a request that was not sampled, or of no request, would otherwise start a trace of its own.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      // The command name only: keys and values can name customers' data.
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command, requireParentSpan: true }),
    ],
  });
  if (head.samplerProblem) api.diag.error(head.samplerProblem);
  sdk.start();
  return api;
}

export async function stopSdk(): Promise<void> {
  await sdk?.shutdown();
}
