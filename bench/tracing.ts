/**
 * Line 2d: what traces cost key authentication (contract section 25: with
 * tracing on at a sampling ratio of 0.1, exporting to a local receiver, at
 * least 0.85x tracing off, in the same run). Tracing is a property of the
 * process, so each side runs on service processes of its own (two a side),
 * started the same way on the same database. On PostgreSQL all run for the
 * whole phase and are loaded in turn (rounds ordered off on on off, as line
 * 2c's); an embedded data directory takes one process at a time, so there each
 * process runs its rounds and stops, the untraced side's first (the last traced
 * one once its spans are counted). The receiver (OTLP/HTTP
 * JSON on 127.0.0.1) runs in its own thread, as a collector elsewhere would.
 * The line FAILs when no span arrives.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { EndpointFailed, type LoadResult, mergeLoads, runLoad } from './load.js';
import type { PhaseContext } from './phases.js';

export interface TracedKeyAuth {
  off: LoadResult;
  on: LoadResult;
  /** on.okPerSec / off.okPerSec. */
  ratio: number;
  spans: number;
  /** The traced processes' highest resident set size: an opt-in's memory, apart from the bench's peak RSS line. */
  tracedPeakRssBytes?: number;
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
function tracingEnv(receiver: { endpoint: string }): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  };
}

/** Rounds of the two sides, ordered off on on off …: a drift of the machine over the phase falls on both alike. */
const ROUNDS = 8;

/**
 * Service processes a side, taking its rounds in turn: where the scheduler places a process's threads against the
 * load generator's moves its throughput by up to a fifth for the life of the process (docs/performance.md, line
 * 2d), so with one process a side the line compared two placements as much as tracing off and on. It divides a
 * side's four rounds.
 */
const PROCESSES_PER_SIDE = 2;

/** A service process of one side: where it answers, and how to stop it. */
export interface SideProcess {
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * `start(env)` starts a service process with `env` added. `together`: every process
 * runs for the whole phase (PostgreSQL); otherwise one after the other (embedded).
 */
export async function tracedKeyAuth(
  ctx: PhaseContext,
  keys: string[],
  start: (env: Record<string, string>) => Promise<SideProcess>,
  options: { together: boolean },
): Promise<TracedKeyAuth> {
  const receiver = await startBenchOtlpReceiver();
  try {
    const envs = { off: {}, on: tracingEnv(receiver) };
    const rotateHeaders = keys.map((key) => ({ 'x-api-key': key }));
    const roundSeconds = Math.max(1, Math.round((2 * ctx.durationSeconds) / ROUNDS));
    const runs: Record<keyof typeof envs, LoadResult[]> = { off: [], on: [] };
    const load = (side: SideProcess, seconds: number) =>
      runLoad(side.baseUrl, { path: PATH, connections: ctx.connections, durationSeconds: seconds, rotateHeaders });
    // Each process warmed once: its keys verified and cached, its code compiled, before anything is timed.
    const started = async (side: keyof typeof envs) => {
      const service = await start(envs[side]);
      await load(service, 2);
      return service;
    };
    if (options.together) {
      const sides: Record<keyof typeof envs, SideProcess[]> = { off: [], on: [] };
      for (const side of ['off', 'on'] as const)
        for (let n = 0; n < PROCESSES_PER_SIDE; n++) sides[side].push(await started(side));
      for (let round = 0; round < ROUNDS; round++) {
        const side = (round + Math.floor(round / 2)) % 2 === 0 ? 'off' : 'on';
        const service = sides[side][runs[side].length % PROCESSES_PER_SIDE]!;
        runs[side].push(await load(service, roundSeconds));
      }
    } else {
      for (const side of ['off', 'on'] as const)
        for (let n = 0; n < PROCESSES_PER_SIDE; n++) {
          const service = await started(side);
          for (let round = 0; round < ROUNDS / 2 / PROCESSES_PER_SIDE; round++)
            runs[side].push(await load(service, roundSeconds));
          // The last traced process goes on until its spans have been counted.
          if (side === 'off' || n < PROCESSES_PER_SIDE - 1) await service.stop();
        }
    }
    // The batch export runs every 5 s: wait for one.
    let spans = await receiver.spans();
    for (let waited = 0; spans === 0 && waited < 10_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      spans = await receiver.spans();
    }
    if (spans === 0) throw new EndpointFailed('no span reached the receiver with tracing on');
    const off = mergeLoads(runs.off);
    const on = mergeLoads(runs.on);
    return { off, on, ratio: on.okPerSec / off.okPerSec, spans };
  } finally {
    await receiver.close();
  }
}
