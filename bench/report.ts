/**
 * One run's measurements and the budgets they are held to (the table, verdicts
 * and JSON file are made in bench/report-table.ts). Ratios to the ceiling are the numbers to compare between
 * machines: absolute req/s on a shared 2-core box move with its neighbours. A
 * line measured on a service process of its own divides by /health on that
 * process, just before and just after it (`ProcessCeiling`).
 */
import os from 'node:os';
import type { WebhookRun } from './webhooks.js';
import type { IdempotentCreation } from './idempotency.js';
import type { QuoteStreamRun } from './quotes.js';
import type { AuditExportRun } from './audit-export.js';
import type { RestrictedKeyAuth } from './restricted-keys.js';
import type { ApprovalRun } from './approvals.js';
import type { TracedKeyAuth } from './tracing.js';
import type { LoadResult } from './load.js';

export interface BulkRun {
  merchants: number;
  plans: number;
  seconds: number;
  /** Rows written (added + removed) per second. */
  rowsPerSec: number;
  /** The same call with ?dry_run=true, on the same data. */
  dryRunSeconds?: number;
  /** History rows the call wrote (one per replaced assignment). */
  historyRows?: number;
  /** The floor the budget names: a bare INSERT ... SELECT of the same rows into the table as the call found it. */
  tableFloorSeconds?: number;
  /** The same into an empty copy of the table. */
  emptyFloorSeconds?: number;
  /** The same into a copy holding the table's rows as the call found them. */
  occupiedFloorSeconds?: number;
  /** The same change scheduled, applied by the worker once due. */
  scheduledSeconds?: number;
  via: string;
}

/**
 * /health on a phase's own service process, just before and just after its
 * load: the ceiling that phase's ratio divides by. Line 1's ceiling was
 * measured minutes earlier on another process, and on a shared 2-core machine
 * the same process's ceiling moves by 2x from one minute to the next.
 */
export interface ProcessCeiling {
  before: LoadResult;
  after: LoadResult;
}

/** The ceiling a line measured between `ceiling.before` and `ceiling.after` divides by: their mean. */
export const processCeilingPerSec = (ceiling: ProcessCeiling) => (ceiling.before.okPerSec + ceiling.after.okPerSec) / 2;

export interface StormRound {
  /** p99 of the quiet runs before and after this round's storm, pooled. */
  aloneP99: number;
  duringP99: number;
  factor: number;
}

export interface StormResult {
  /** Over all rounds: mean rates, summed statuses. */
  logins: LoadResult;
  /** The same fixed-rate /health probe: alone (every quiet run, pooled) and during the storms (pooled). */
  healthAlone: LoadResult;
  healthDuring: LoadResult;
  rounds: StormRound[];
  /** The verdict's figure: the median of the rounds' factors. */
  factor: number;
}

/** A scheduled /all applied by the service's worker, beside the /health probe of the login storm. */
export interface ScheduledAllResult {
  merchants: number;
  plans: number;
  /** From the instant it fell due to its applied_at (the worker's next look, then the apply). */
  dueToAppliedSeconds: number;
  /** The probe alone, just before and just after (pooled). */
  healthAlone: LoadResult;
  /** The probe from the instant the change fell due until it was applied. */
  healthDuring: LoadResult;
  /** healthDuring p99 / healthAlone p99 (an alone p99 under 1 ms counts as 1 ms). */
  factor: number;
}

export interface FirstStart {
  /** Peak RSS of a server started on an empty embedded data directory, through the demo data load. */
  peakRssBytes: number;
  readySeconds: number;
}

export interface BenchReport {
  driver: 'postgres' | 'pglite';
  startedAt: string;
  seconds: number;
  machine: { cpus: number; node: string; platform: string };
  settings: { durationSeconds: number; connections: number; loginConcurrency: number; loginQueueLimit: number };
  ceiling?: LoadResult;
  keyAuth?: LoadResult;
  bearerAuth?: LoadResult;
  listing?: LoadResult;
  /** Keys with their own rate_limit, counted in Redis. */
  rateLimited?: LoadResult;
  /** /health on the rate-limited line's own process, just before and just after it: that line's ceiling. */
  rateLimitedCeiling?: ProcessCeiling;
  /** GET /v1/merchants/{id}/fee-rules?at= an instant answered from present and history. */
  feeRulesAt?: LoadResult;
  /** GET /v1/merchants?size=1000: the largest page, of 10,000 merchants. */
  fullPage?: LoadResult;
  /** POST /v1/fee-quotes of one transaction (bench/quotes.ts). */
  feeQuote?: LoadResult;
  /** POST /v1/fee-quotes of 1,000,000 NDJSON lines over 1,000 merchants (bench/quotes.ts). */
  quoteStream?: QuoteStreamRun;
  loginStorm?: StormResult;
  firstStart?: FirstStart;
  bulk?: BulkRun[];
  scheduledAll?: ScheduledAllResult;
  /** Approving a held /all against the same /all at once, rounds A B B A (bench/approvals.ts). */
  approvedAll?: ApprovalRun;
  /** Webhook delivery: 10,000 events to a receiver on loopback (bench/webhooks.ts). */
  webhooks?: WebhookRun;
  /** POST /v1/api-keys without and with Idempotency-Key, rounds alternating (bench/idempotency.ts). */
  idempotentCreation?: IdempotentCreation;
  /** GET /v1/users/me with restricted and unrestricted keys, rounds alternating (bench/restricted-keys.ts). */
  restrictedKeyAuth?: RestrictedKeyAuth;
  /** GET /v1/users/me on a service with tracing at 0.1 and on one without (bench/tracing.ts). */
  tracedKeyAuth?: TracedKeyAuth;
  /** GET /v1/audit-events/export of 1,000,000 records (bench/audit-export.ts). */
  auditExport?: AuditExportRun;
  peakRssBytes?: number;
  /** What the service logged during the run (LOG_LEVEL=warn), by level and message. */
  serverLog?: Record<string, number>;
}

export const BUDGETS = {
  keyAuthRatio: 0.6,
  bearerAuthRatio: 0.6,
  listingRatio: 0.3,
  rateLimitedRatio: 0.4,
  feeRulesAtRatioPostgres: 0.3,
  feeRulesAtRatioEmbedded: 0.2,
  stormHealthP99Factor: 3,
  scheduledAllHealthP99Factor: 3,
  bulk100kSecondsPostgres: 8,
  bulkOverFloor: 1.5,
  scheduledOverImmediate: 1.1,
  /** Approving a held /all against the same /all at once, in the same run (contract section 23, issue 42). */
  approvalOverImmediate: 1.1,
  /** A key creation with Idempotency-Key against one without, in the same run (contract section 21). */
  idempotentCreationRatio: 0.8,
  /** Key auth with 5 permissions and 3 allowed ranges against an unrestricted key, in the same run (contract section 22). */
  restrictedKeyAuthRatio: 0.9,
  /** Key auth with tracing on at a sampling ratio of 0.1 against tracing off, in the same run (contract section 25). */
  tracedKeyAuthRatio: 0.85,
  /** A replay of one stored answer against first requests with a key, in the same run (issue 40). */
  idempotentReplayRatio: 1.0,
  bulkDryRun100kSecondsPostgres: 4,
  peakRssMb: 160,
  /** Line 3c on PostgreSQL: merchants written per second, at least this many times the ceiling's requests per second. */
  fullPageMerchantsRatioPostgres: 4,
  /**
   * Embedded, the database runs inside the service: PGlite's module needs at
   * least 128 MiB of WebAssembly memory, plus its buffers and code. Also the
   * budget of a first start on an empty embedded directory with the demo data.
   */
  peakRssMbEmbedded: 400,
  /** PostgreSQL only: the embedded database shares the service's one thread. */
  webhookDeliveriesPerSecPostgres: 500,
  webhookP99MsPostgres: 2000,
  keyAuthWhileDeliveringRatio: 0.5,
  /** Fee quotes (contract section 24): one transaction against the ceiling; a stream's quotes/s (PostgreSQL) and RSS growth. */
  feeQuoteRatio: 0.3,
  quoteStreamPerSecPostgres: 100_000,
  quoteStreamRssGrowthMb: 50,
  /** Exporting 1,000,000 audit records adds at most this to the service's RSS (contract section 25). */
  auditExportRssGrowthMb: 50,
} as const;

/** The least /health p99 alone the storm ratio divides by. */
export const STORM_P99_FLOOR_MS = 1;

/**
 * during / alone. A p99 below 1 ms is scheduler noise (one time slice of a busy
 * core is longer): the alone figure counts as at least 1 ms.
 */
export function stormFactor(aloneP99: number, duringP99: number): number {
  return duringP99 / Math.max(aloneP99, STORM_P99_FLOOR_MS);
}

export function machine(): BenchReport['machine'] {
  return { cpus: os.availableParallelism(), node: process.versions.node, platform: `${os.platform()} ${os.arch()}` };
}
