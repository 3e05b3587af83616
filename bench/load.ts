/**
 * Load generation (autocannon's programmatic API) and the few plain HTTP calls
 * the phases need to set themselves up. Throughput counts 2xx answers only: a
 * storm answered with 503s is not a storm of logins.
 */
import { Worker } from 'node:worker_threads';
import autocannon, { type Options as AutocannonOptions, type Result as AutocannonResult } from 'autocannon';

export interface LoadOptions {
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  connections?: number;
  durationSeconds: number;
  /** A different header set per request, in turn (e.g. many API keys). */
  rotateHeaders?: Array<Record<string, string>>;
}

export interface LoadResult {
  /** 2xx answers per second. */
  okPerSec: number;
  /** Every answer per second, whatever its status. */
  totalPerSec: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
}

function autocannonOptions(baseUrl: string, options: LoadOptions): AutocannonOptions {
  const headers = { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) };
  const rotate = options.rotateHeaders;
  let turn = 0;
  return {
    url: `${baseUrl}${options.path}`,
    method: options.method ?? 'GET',
    connections: options.connections ?? 50,
    duration: options.durationSeconds,
    headers,
    timeout: 30,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(rotate?.length
      ? {
          requests: [
            { setupRequest: (request) => ({ ...request, headers: { ...headers, ...rotate[turn++ % rotate.length] } }) },
          ],
        }
      : {}),
  };
}

const countOk = (statuses: Record<string, number>) =>
  Object.entries(statuses).reduce((sum, [code, count]) => (code.startsWith('2') ? sum + count : sum), 0);

type AutocannonSummary = Pick<AutocannonResult, 'duration' | 'errors' | 'statusCodeStats' | 'latency'>;

function summarize(result: AutocannonSummary): LoadResult {
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return {
    okPerSec: countOk(statuses) / result.duration,
    totalPerSec: total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    errors: result.errors,
  };
}

/** Load from this thread: for the throughput phases, where nothing else is measured beside it. */
export async function runLoad(baseUrl: string, options: LoadOptions): Promise<LoadResult> {
  return summarize(await autocannon(autocannonOptions(baseUrl, options)));
}

/** The next message `worker` posts; rejects if it fails or exits first. */
function nextMessage<T>(worker: Worker, file: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (msg: T) => settle(() => resolve(msg));
    const onError = (err: Error) => settle(() => reject(err));
    const onExit = (code: number) =>
      settle(() => reject(new Error(`${file} exited with code ${code} before reporting`)));
    const settle = (outcome: () => void) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      outcome();
    };
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

/** Runs a worker thread to completion and returns the one message it posts. */
async function workerResult<T>(file: string, workerData: unknown): Promise<T> {
  const worker = new Worker(new URL(file, import.meta.url), { workerData });
  try {
    return await nextMessage<T>(worker, file);
  } finally {
    await worker.terminate();
  }
}

/**
 * Load from a worker thread at nice `nice` (bench/load-worker.mjs), for a load
 * that runs beside a measurement: the generator then takes the CPU the service
 * leaves, as remote clients would, instead of competing with it. The worker
 * starts and loads autocannon first; `run()` then starts the load itself, so a
 * measurement begun at the same moment sees the service's work, not the
 * generator's start-up.
 */
export async function prepareLoadInBackground(
  baseUrl: string,
  options: LoadOptions,
  nice: number,
): Promise<{ run(): Promise<LoadResult> }> {
  if (options.rotateHeaders)
    throw new Error('prepareLoadInBackground cannot rotate headers (functions do not cross threads)');
  const file = './load-worker.mjs';
  const worker = new Worker(new URL(file, import.meta.url), {
    workerData: { options: autocannonOptions(baseUrl, options), nice },
  });
  try {
    await nextMessage<'ready'>(worker, file);
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  return {
    async run() {
      try {
        const result = nextMessage<AutocannonSummary>(worker, file);
        worker.postMessage('go');
        return summarize(await result);
      } finally {
        await worker.terminate();
      }
    },
  };
}

export interface ProbeInput {
  url: string;
  rate: number;
  connections: number;
  durationSeconds: number;
}

export interface ProbeOutput {
  /** Latency of each answered request in ms, from the moment it was sent. */
  latenciesMs: number[];
  /** When each of them was sent, in ms since the epoch (same order). */
  sentAtMs: number[];
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
}

/** The value below which `fraction` of the sorted samples lie (nearest rank). */
export function percentile(sorted: number[], fraction: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/**
 * A fixed-rate GET probe in its own worker thread (bench/probe-worker.mjs): its
 * latencies are not delayed by load the bench generates at the same time, and
 * are measured in microseconds instead of autocannon's whole milliseconds.
 */
export async function runProbe(
  baseUrl: string,
  { path, ...pace }: Omit<ProbeInput, 'url'> & { path: string },
): Promise<ProbeOutput> {
  const workerData: ProbeInput = { url: `${baseUrl}${path}`, ...pace };
  return workerResult<ProbeOutput>('./probe-worker.mjs', workerData);
}

/**
 * A probe that runs until `stop()` (at most `durationSeconds`): for a measurement
 * that lasts as long as something else does, such as a scheduled change applying.
 */
export async function startProbe(
  baseUrl: string,
  { path, ...pace }: Omit<ProbeInput, 'url'> & { path: string },
): Promise<{ stop(): Promise<ProbeOutput> }> {
  const file = './probe-worker.mjs';
  const workerData: ProbeInput = { url: `${baseUrl}${path}`, ...pace };
  const worker = new Worker(new URL(file, import.meta.url), { workerData });
  const result = nextMessage<ProbeOutput>(worker, file);
  result.catch(() => {}); // reported by stop(), not as an unhandled rejection before it
  return {
    async stop() {
      worker.postMessage('stop');
      try {
        return await result;
      } finally {
        await worker.terminate();
      }
    },
  };
}

/** The samples of `run` sent within [fromMs, toMs] (ms since the epoch), as a run of that length. */
export function probeWindow(run: ProbeOutput, fromMs: number, toMs: number): ProbeOutput {
  const kept = run.sentAtMs.flatMap((at, i) => (at >= fromMs && at <= toMs ? [i] : []));
  return {
    latenciesMs: kept.map((i) => run.latenciesMs[i]!),
    sentAtMs: kept.map((i) => run.sentAtMs[i]!),
    // Statuses are not kept per sample: the window's are those of the whole run.
    statuses: run.statuses,
    errors: run.errors,
    seconds: Math.max(0.001, (toMs - fromMs) / 1000),
  };
}

/** One summary over the samples of several probe runs together (e.g. before and after a storm). */
export function probeSummary(...runs: ProbeOutput[]): LoadResult {
  const sorted = runs.flatMap((run) => run.latenciesMs).sort((a, b) => a - b);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const run of runs)
    for (const [code, count] of Object.entries(run.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
  return {
    okPerSec: countOk(statuses) / seconds,
    totalPerSec: sorted.length / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    statuses,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Several runs of one load as one: rates averaged, statuses and errors summed, latencies by their median. */
export function mergeLoads(runs: LoadResult[]): LoadResult {
  const statuses: Record<string, number> = {};
  for (const run of runs)
    for (const [code, count] of Object.entries(run.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
  const mean = (pick: (run: LoadResult) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  return {
    okPerSec: mean((r) => r.okPerSec),
    totalPerSec: mean((r) => r.totalPerSec),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    statuses,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

/** A short run first, so JIT, connection pools and caches are warm for the measured one. */
export async function warmThenRun(baseUrl: string, options: LoadOptions, warmSeconds = 2): Promise<LoadResult> {
  await runLoad(baseUrl, { ...options, durationSeconds: warmSeconds });
  return runLoad(baseUrl, options);
}

export interface JsonResponse {
  status: number;
  body: unknown;
}

/** A call a phase needs answered another status than it should: the run stops and says so (bench/run.ts). */
export class EndpointFailed extends Error {}

/** Throws EndpointFailed naming the call, the status it got and the start of the answer. */
export function expectStatus(response: JsonResponse, expected: number, call: string): void {
  if (response.status === expected) return;
  throw new EndpointFailed(
    `${call} answered ${response.status}, expected ${expected}: ${JSON.stringify(response.body).slice(0, 300)}`,
  );
}

export async function request(
  baseUrl: string,
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...init.headers, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: response.status, body };
}

export async function login(baseUrl: string, credentials: { user: string; password: string }): Promise<string> {
  const response = await request(baseUrl, 'POST', '/v1/login', { body: credentials });
  expectStatus(response, 200, `POST /v1/login as ${credentials.user}`);
  return (response.body as { token: { access_token: string } }).token.access_token;
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function mapConcurrent<T, R>(
  items: T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** Samples `rssOf()` every 100 ms from now: `growth()` is the peak above the first reading, `stop()` ends it. */
export function sampleRssGrowth(rssOf: () => number): { growth(): number; stop(): void } {
  const before = rssOf();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf());
  }, 100);
  return { growth: () => Math.max(0, peak - before), stop: () => clearInterval(sampler) };
}
