/**
 * The service's Prometheus series, in one registry (prom-client). Features
 * increment these directly; src/plugins/metrics.ts times HTTP requests and
 * serves the registry on METRICS_HOST:METRICS_PORT, apart from the API.
 * Gauges read their value when scraped, from the sources the running app sets.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

export const httpRequests = new Counter({
  name: 'feegate_http_requests_total',
  help: 'HTTP requests answered, by route, method and status (499: the client hung up first; 408: its request did not arrive in time)',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: 'feegate_http_request_duration_seconds',
  help: 'Time from receiving a request to the end of its answer, by route, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const keyVerifications = new Counter({
  name: 'feegate_api_key_verifications_total',
  help: 'API keys presented, by outcome: valid, invalid (unknown, revoked or malformed), error',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const logins = new Counter({
  name: 'feegate_logins_total',
  help: 'Logins by outcome: success, invalid_credentials, throttled, busy, client_closed, invalid_request, error',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const cacheLookups = new Counter({
  name: 'feegate_cache_lookups_total',
  help: 'Lookups in the in-memory caches, by cache and result (hit or miss)',
  labelNames: ['cache', 'result'] as const,
  registers: [registry],
});

export const traceSpansDropped = new Counter({
  name: 'feegate_trace_spans_dropped_total',
  help: 'Spans dropped because the export queue was full (a slow or unreachable collector); 0 while tracing is off',
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'feegate_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: succeeded (2xx), failed (any other answer, a timeout, a refused URL or connection), interrupted (the instance stopped)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookAttemptDuration = new Histogram({
  name: 'feegate_webhook_attempt_duration_seconds',
  help: 'Time of a webhook delivery attempt, from resolving the host to the end of the answer',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/** Where the gauges read from; set by the app that serves the metrics. */
export interface GaugeSources {
  loginQueueDepth?(): number;
  listingPagesWaiting?(): number;
  databasePool?(): { total: number; idle: number; waiting: number } | undefined;
  webhookQueue?(): Promise<{ pending: number; oldestAgeSeconds: number }>;
}
let sources: GaugeSources = {};
export function setGaugeSources(next: GaugeSources): void {
  sources = next;
}

new Gauge({
  name: 'feegate_login_queue_depth',
  help: 'Logins waiting for a password-hashing slot',
  registers: [registry],
  collect() {
    this.set(sources.loginQueueDepth?.() ?? 0);
  },
});

new Gauge({
  name: 'feegate_listing_pages_waiting',
  help: 'Merchant listing pages waiting for their turn (LISTING_CONCURRENT_PAGES are read at once)',
  registers: [registry],
  collect() {
    this.set(sources.listingPagesWaiting?.() ?? 0);
  },
});

const poolGauge = (
  name: string,
  help: string,
  read: (pool: { total: number; idle: number; waiting: number }) => number,
) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      const pool = sources.databasePool?.();
      if (pool) this.set(read(pool));
    },
  });
poolGauge('feegate_db_pool_connections', 'PostgreSQL connections open in the pool', (p) => p.total);
poolGauge('feegate_db_pool_idle_connections', 'PostgreSQL connections idle in the pool', (p) => p.idle);
poolGauge('feegate_db_pool_waiting_requests', 'Queries waiting for a PostgreSQL connection', (p) => p.waiting);

const webhookQueueGauge = (
  name: string,
  help: string,
  read: (q: { pending: number; oldestAgeSeconds: number }) => number,
) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      const queue = await sources.webhookQueue?.().catch(() => undefined);
      if (queue) this.set(read(queue));
    },
  });
webhookQueueGauge(
  'feegate_webhook_queue_depth',
  'Webhook deliveries PENDING (due, waiting for a retry, or under way)',
  (q) => q.pending,
);
webhookQueueGauge(
  'feegate_webhook_oldest_pending_age_seconds',
  'Age of the oldest PENDING webhook delivery',
  (q) => q.oldestAgeSeconds,
);

let defaultsOn = false;
/** The process's default series (CPU, memory, event loop lag, GC), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry });
}

/** Counts how a verification ended, by the error it threw (401 means refused). */
export async function countOutcome<T>(counter: Counter<'outcome'>, work: Promise<T>): Promise<T> {
  try {
    const result = await work;
    counter.inc({ outcome: 'valid' });
    return result;
  } catch (err) {
    counter.inc({ outcome: (err as { status?: number }).status === 401 ? 'invalid' : 'error' });
    throw err;
  }
}
