/**
 * Line 2d: what traces cost key authentication (contract section 25: with
 * tracing on at a sampling ratio of 0.1, exporting to a local receiver, at
 * least 0.85x tracing off, in the same run). Tracing is a property of the
 * process, so each side runs on a service process of its own, started the same
 * way on the same database; the receiver (OTLP/HTTP JSON on 127.0.0.1) runs in
 * its own thread, as a collector elsewhere would. The line FAILs when no span arrives.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { EndpointFailed, type LoadResult, warmThenRun } from './load.js';
import type { PhaseContext } from './phases.js';

export interface TracedKeyAuth {
  off: LoadResult;
  on: LoadResult;
  /** on.okPerSec / off.okPerSec. */
  ratio: number;
  spans: number;
}

const PATH = '/v1/users/me';

interface BenchOtlpReceiver {
  endpoint: string;
  /** Spans received so far. */
  spans(): Promise<number>;
  close(): Promise<void>;
}

/** The receiver in its thread (bench/otlp-receiver-worker.mjs); one question at a time. */
async function startBenchOtlpReceiver(): Promise<BenchOtlpReceiver> {
  const worker = new Worker(new URL('./otlp-receiver-worker.mjs', import.meta.url));
  const answer = <T>() => once(worker, 'message').then(([message]) => message as T);
  const { port } = await answer<{ port: number }>();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async spans() {
      const answered = answer<{ count: number }>();
      worker.postMessage('count');
      return (await answered).count;
    },
    async close() {
      const exited = once(worker, 'exit');
      worker.postMessage('close');
      await exited;
    },
  };
}

/** The OTEL_* variables of the traced side: everything else as the other. */
export function tracingEnv(receiver: { endpoint: string }): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  };
}

/** Key auth on `baseUrl` with `keys`, warmed first. */
export function keyAuthLoad(ctx: PhaseContext, baseUrl: string, keys: string[]): Promise<LoadResult> {
  return warmThenRun(baseUrl, {
    path: PATH,
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
    rotateHeaders: keys.map((key) => ({ 'x-api-key': key })),
  });
}

/** `restart(env)` stops the running service and starts another with `env` added; answers its base URL. */
export async function tracedKeyAuth(
  ctx: PhaseContext,
  keys: string[],
  restart: (env: Record<string, string>) => Promise<string>,
): Promise<TracedKeyAuth> {
  const receiver = await startBenchOtlpReceiver();
  try {
    const off = await keyAuthLoad(ctx, await restart({}), keys);
    const on = await keyAuthLoad(ctx, await restart(tracingEnv(receiver)), keys);
    // The batch export runs every 5 s: wait for one.
    let spans = await receiver.spans();
    for (let waited = 0; spans === 0 && waited < 10_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      spans = await receiver.spans();
    }
    if (spans === 0) throw new EndpointFailed('no span reached the receiver with tracing on');
    return { off, on, ratio: on.okPerSec / off.okPerSec, spans };
  } finally {
    await receiver.close();
  }
}
