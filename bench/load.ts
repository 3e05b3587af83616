/**
 * Load generation (autocannon's programmatic API) and the few plain HTTP calls
 * the phases need to set themselves up. Throughput counts 2xx answers only: a
 * storm answered with 503s is not a storm of logins.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  connections?: number;
  durationSeconds: number;
  /** Open loop: this many requests per second in total, whatever the latency. */
  rate?: number;
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

export async function runLoad(baseUrl: string, options: LoadOptions): Promise<LoadResult> {
  const headers = { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) };
  const rotate = options.rotateHeaders;
  let turn = 0;
  const result = await autocannon({
    url: `${baseUrl}${options.path}`,
    method: options.method ?? 'GET',
    connections: options.connections ?? 50,
    duration: options.durationSeconds,
    headers,
    timeout: 30,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    // autocannon's coordinated-omission correction assumes a 1 ms interval at any rate
    // (ceil(1 / rate)), which invents samples; the probe paces itself, so it is off.
    ...(options.rate ? { overallRate: options.rate, ignoreCoordinatedOmission: true } : {}),
    ...(rotate?.length
      ? { requests: [{ setupRequest: (request) => ({ ...request, headers: { ...headers, ...rotate[turn++ % rotate.length] } }) }] }
      : {}),
  });
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const ok = Object.entries(statuses).reduce((sum, [code, count]) => (code.startsWith('2') ? sum + count : sum), 0);
  const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return {
    okPerSec: ok / result.duration,
    totalPerSec: total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    errors: result.errors,
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

export async function request(baseUrl: string, method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<JsonResponse> {
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
  const token = (response.body as { token?: { access_token?: string } } | null)?.token?.access_token;
  if (response.status !== 200 || !token) throw new Error(`login as ${credentials.user} failed: ${response.status}`);
  return token;
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function mapConcurrent<T, R>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
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
