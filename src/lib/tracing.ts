/**
 * OpenTelemetry traces (contract section 25), off unless OTEL_EXPORTER_OTLP_ENDPOINT
 * or OTEL_TRACES_EXPORTER is set. Off, nothing of OpenTelemetry is loaded: this
 * module is all that is, and its spans are plain calls. On, `startTracing` loads
 * the SDK (tracing-sdk.ts) before the service's modules, so that its
 * instrumentations see `pg`, `ioredis` and `http` load.
 */
import type * as OtelApi from '@opentelemetry/api';

type Api = typeof OtelApi;
type Attributes = Record<string, string | number | boolean>;

let api: Api | undefined;
/** The ids of a log line written for a request the sampler skipped (tracing-head-sampling.ts). */
let skippedRequestLogIds: ((logger: unknown) => { trace_id: string; span_id: string } | undefined) | undefined;

/** Whether the standard variables ask for traces; OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true keep them off. */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER?.trim() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER);
}

/** Starts the SDK when traces are configured; call before importing the service. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (!tracingConfigured(env) || api) return;
  const sdk = await import('./tracing-sdk.js');
  api = await sdk.startSdk(env);
  skippedRequestLogIds = sdk.skippedRequestLogIds;
}

/** Flushes the spans still queued; the process is about to exit. */
export async function stopTracing(): Promise<void> {
  if (!api) return;
  const sdk = await import('./tracing-sdk.js');
  await sdk.stopSdk();
}

export interface SpanOptions {
  /** A trace of its own (a webhook delivery attempt), not a child of whatever runs now. */
  root?: boolean;
  /** The W3C traceparent of the span this one follows from (the change that wrote the event it delivers). */
  linkedTo?: string | null;
}

/** version-traceId-spanId-flags, as the W3C Trace Context writes a traceparent. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C traceparent of the active span, to store with what a later trace follows from; null while tracing is off or outside a span. */
export function activeTraceparent(): string | null {
  const span = api?.trace.getActiveSpan();
  if (!span?.isRecording()) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The link to the span of `traceparent`; none for a value that is not one. */
function linksTo(otel: Api, traceparent: string | null | undefined): OtelApi.Link[] {
  const [, traceId, spanId, flags] = TRACEPARENT.exec(traceparent ?? '') ?? [];
  if (!traceId || !spanId || !flags) return [];
  const context = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  return otel.trace.isSpanContextValid(context) ? [{ context }] : [];
}

/**
 * `work` inside a span named `name` when tracing is on and a span is active (or `root` asks for a trace of
 * its own); just `work` otherwise, as the pg instrumentation does with `requireParentSpan`. A failure marks
 * the span and goes on.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  const otel = api;
  if (!otel || (!options.root && !otel.trace.getActiveSpan())) return work();
  const parent = options.root ? otel.ROOT_CONTEXT : otel.context.active();
  const links = linksTo(otel, options.linkedTo);
  return otel.trace.getTracer('feegate').startActiveSpan(name, { attributes, links }, parent, async (span) => {
    try {
      return await work();
    } catch (err) {
      span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * The ids of the active span, for log lines (pino's mixin, which passes the logger written through); for a
 * request the sampler skipped, the ids it would have had; empty while tracing is off or outside a request.
 */
export function activeTraceIds(
  _line?: object,
  _level?: number,
  logger?: unknown,
): { trace_id?: string; span_id?: string } {
  const span = api?.trace.getActiveSpan();
  if (!span) return skippedRequestLogIds?.(logger) ?? {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Whether traces are being recorded in this process. */
export const tracingOn = (): boolean => api !== undefined;
