/**
 * Turns one run's measurements into the printed table, the budget verdicts and
 * the JSON file. Ratios to the ceiling are the numbers to compare between
 * machines: absolute req/s on a shared 2-core box move with its neighbours. A
 * line measured on a service process of its own divides by /health on that
 * process, just before and just after it (`ProcessCeiling`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { WebhookRound, WebhookRun } from './webhooks.js';
import type { IdempotentCreation } from './idempotency.js';
import type { QuoteStreamRun } from './quotes.js';
import type { AuditExportRun } from './audit-export.js';
import type { RestrictedKeyAuth } from './restricted-keys.js';
import type { ApprovalRun } from './approvals.js';
import type { TracedKeyAuth } from './tracing.js';
import { fileURLToPath } from 'node:url';
import type { LoadResult } from './load.js';
import { MAX_MERCHANT_PAGE_SIZE as MERCHANT_PAGE } from '../src/features/merchants/merchant-answer-schemas.js';

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
const processCeilingPerSec = (ceiling: ProcessCeiling) => (ceiling.before.okPerSec + ceiling.after.okPerSec) / 2;

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
const STORM_P99_FLOOR_MS = 1;

/**
 * during / alone. A p99 below 1 ms is scheduler noise (one time slice of a busy
 * core is longer): the alone figure counts as at least 1 ms.
 */
export function stormFactor(aloneP99: number, duringP99: number): number {
  return duringP99 / Math.max(aloneP99, STORM_P99_FLOOR_MS);
}

type Verdict = 'PASS' | 'FAIL' | '';

interface Line {
  measure: string;
  result: string;
  ratio: string;
  budget: string;
  verdict: Verdict;
}

const num = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (n: number) => `${num(n, n < 1 ? 2 : n < 10 ? 1 : 0)} ms`;
const check = (ok: boolean): Verdict => (ok ? 'PASS' : 'FAIL');

/** The loaded endpoint answered every request with 2xx, or with a status in `allowed` that the phase measures (the storm's refusals). */
function answered(result: LoadResult, allowed: readonly string[] = []): boolean {
  return (
    result.errors === 0 && Object.keys(result.statuses).every((code) => code.startsWith('2') || allowed.includes(code))
  );
}

/** FAIL when the endpoint did not answer 2xx under load, whatever the figures; else the budget's verdict, on lines that have one. */
function verdict(result: LoadResult, withinBudget?: boolean): Verdict {
  if (!answered(result)) return 'FAIL';
  return withinBudget === undefined ? '' : check(withinBudget);
}

/** The 503s a login storm draws are what it measures (refused/s), not a failing endpoint. */
const STORM_REFUSALS = ['503'];

/** "/health p99 alone -> during (xfactor)", saying when an alone p99 counted as the 1 ms floor. */
function aloneToDuring(alone: LoadResult, during: LoadResult): string {
  const floored = alone.p99 < STORM_P99_FLOOR_MS ? ` (as ${ms(STORM_P99_FLOOR_MS)})` : '';
  return (
    `${ms(alone.p99)}${floored}${nonOk(alone)} -> ${ms(during.p99)}${nonOk(during)}` +
    ` (x${stormFactor(alone.p99, during.p99).toFixed(2)})`
  );
}

export function lines(report: BenchReport): Line[] {
  const out: Line[] = [];
  const ceiling = report.ceiling;
  const ratioOf = (r: LoadResult, ceilingPerSec = ceiling?.okPerSec) =>
    ceilingPerSec ? r.okPerSec / ceilingPerSec : NaN;
  // Three decimals under 0.1: a full page at 0.003 of the ceiling is not 0.00.
  const ratioText = (ratio: number) => (Number.isNaN(ratio) ? '' : ratio.toFixed(ratio < 0.1 ? 3 : 2));

  if (report.firstStart) {
    const mb = report.firstStart.peakRssBytes / 1024 / 1024;
    out.push({
      measure: '0. first start, empty embedded dir + demo',
      result: `peak RSS ${num(mb)} MB, ready in ${num(report.firstStart.readySeconds, 1)} s`,
      ratio: '',
      budget: `<= ${BUDGETS.peakRssMbEmbedded} MB`,
      verdict: check(mb <= BUDGETS.peakRssMbEmbedded),
    });
  }

  if (ceiling) {
    out.push({
      measure: '1. ceiling GET /health',
      result: `${num(ceiling.okPerSec)} req/s, p99 ${ms(ceiling.p99)}${nonOk(ceiling)}`,
      ratio: '1.00',
      budget: '',
      verdict: verdict(ceiling),
    });
  }
  /** Without `min`, no budget: the ratio to the ceiling is the figure to watch. With `own`, against its process's ceiling. */
  const throughputLine = (measure: string, value: LoadResult | undefined, min?: number, own?: ProcessCeiling) => {
    if (!value) return;
    const ratio = ratioOf(value, own ? processCeilingPerSec(own) : undefined);
    out.push({
      measure,
      result: `${num(value.okPerSec)} req/s, p50 ${ms(value.p50)}, p99 ${ms(value.p99)}${nonOk(value)}`,
      ratio: ratioText(ratio),
      budget: min === undefined ? '' : `>= ${min.toFixed(2)} x ceiling`,
      verdict: verdict(value, min === undefined ? undefined : ratio >= min),
    });
  };
  throughputLine('2. key auth GET /v1/users/me', report.keyAuth, BUDGETS.keyAuthRatio);
  if (report.restrictedKeyAuth) {
    const { unrestricted, restricted, ratio } = report.restrictedKeyAuth;
    out.push({
      measure: '2c. key auth, 5 permissions + 3 allowed ranges / unrestricted',
      result:
        `${num(restricted.okPerSec)} vs ${num(unrestricted.okPerSec)} req/s, ` +
        `p99 ${ms(restricted.p99)} vs ${ms(unrestricted.p99)}${nonOk(restricted)}${nonOk(unrestricted)}`,
      ratio: ratio.toFixed(2),
      budget: `>= ${BUDGETS.restrictedKeyAuthRatio.toFixed(2)} x unrestricted`,
      verdict: verdict(restricted, ratio >= BUDGETS.restrictedKeyAuthRatio && answered(unrestricted)),
    });
  }
  if (report.tracedKeyAuth) {
    const { off, on, ratio, spans } = report.tracedKeyAuth;
    out.push({
      measure: '2d. key auth, tracing at 0.1 / off',
      result:
        `${num(on.okPerSec)} vs ${num(off.okPerSec)} req/s, ` +
        `p99 ${ms(on.p99)} vs ${ms(off.p99)}, ${spans} spans received${nonOk(on)}${nonOk(off)}`,
      ratio: ratio.toFixed(2),
      budget: `>= ${BUDGETS.tracedKeyAuthRatio.toFixed(2)} x off`,
      verdict: verdict(on, ratio >= BUDGETS.tracedKeyAuthRatio && answered(off)),
    });
  }
  throughputLine('2b. bearer auth GET /v1/users/me', report.bearerAuth, BUDGETS.bearerAuthRatio);
  throughputLine('3. listing GET /v1/api-keys size=10', report.listing, BUDGETS.listingRatio);
  /** The ceiling a line on its own process divides by, beside line 1's. */
  const processCeilingLine = (own: ProcessCeiling | undefined) => {
    if (!own) return;
    out.push({
      measure: '   its ceiling: GET /health on its process, before and after',
      result:
        `${num(own.before.okPerSec)} and ${num(own.after.okPerSec)} req/s` +
        `${nonOk(own.before)}${nonOk(own.after)}${ceiling ? ` (line 1: ${num(ceiling.okPerSec)})` : ''}`,
      ratio: '',
      budget: '',
      verdict: answered(own.before) && answered(own.after) ? '' : 'FAIL',
    });
  };
  throughputLine(
    '6. rate-limited keys + Redis GET /v1/users/me',
    report.rateLimited,
    BUDGETS.rateLimitedRatio,
    report.rateLimitedCeiling,
  );
  processCeilingLine(report.rateLimitedCeiling);
  throughputLine(
    '3b. fee rules at an instant GET /v1/merchants/{id}/fee-rules?at=',
    report.feeRulesAt,
    report.driver === 'postgres' ? BUDGETS.feeRulesAtRatioPostgres : BUDGETS.feeRulesAtRatioEmbedded,
  );
  if (report.fullPage) {
    // Merchants written per second against the ceiling's requests: a page of 10,000 costs 10,000 rows, not one request.
    const page = report.fullPage;
    const merchantsPerSec = page.okPerSec * MERCHANT_PAGE;
    const ratio = ceiling ? merchantsPerSec / ceiling.okPerSec : NaN;
    const gated = report.driver === 'postgres';
    out.push({
      measure: '3c. full page GET /v1/merchants?size=10000 (of 12,000)',
      result: `${num(page.okPerSec, 1)} pages/s, ${num(merchantsPerSec)} merchants/s, p50 ${ms(page.p50)}, p99 ${ms(page.p99)}${nonOk(page)}`,
      ratio: `${num(ratio, 2)} merchants/s per ceiling req/s`,
      budget: gated ? `merchants/s >= ${BUDGETS.fullPageMerchantsRatioPostgres} x ceiling` : '',
      verdict: verdict(page, gated ? ratio >= BUDGETS.fullPageMerchantsRatioPostgres : undefined),
    });
  }

  throughputLine('9a. fee quote POST /v1/fee-quotes, one transaction', report.feeQuote, BUDGETS.feeQuoteRatio);
  if (report.quoteStream) {
    const run = report.quoteStream;
    const gated = report.driver === 'postgres';
    const growthMb = run.rssGrowthBytes / 1024 / 1024;
    out.push({
      measure: `9b. fee quotes NDJSON ${num(run.transactions)} lines over ${num(run.merchants)} merchants`,
      result: `${num(run.quotesPerSec)} quotes/s (${num(run.seconds, 1)} s), ${num(run.notQuoted)} not quoted`,
      ratio: '',
      budget: gated ? `>= ${num(BUDGETS.quoteStreamPerSecPostgres)} quotes/s` : '',
      verdict: run.notQuoted > 0 ? 'FAIL' : gated ? check(run.quotesPerSec >= BUDGETS.quoteStreamPerSecPostgres) : '',
    });
    out.push({
      measure: '   the service RSS growth during the stream',
      result: `${num(growthMb, 1)} MB`,
      ratio: '',
      budget: `<= ${BUDGETS.quoteStreamRssGrowthMb} MB`,
      verdict: check(growthMb <= BUDGETS.quoteStreamRssGrowthMb),
    });
  }

  if (report.auditExport) {
    const run = report.auditExport;
    const growthMb = run.rssGrowthBytes / 1024 / 1024;
    out.push({
      measure: `10. audit export NDJSON of ${num(run.records)} records`,
      result: `${num(run.recordsPerSec)} records/s (${num(run.seconds, 1)} s), RSS +${num(growthMb, 1)} MB`,
      ratio: '',
      budget: `<= ${BUDGETS.auditExportRssGrowthMb} MB RSS growth`,
      verdict: check(growthMb <= BUDGETS.auditExportRssGrowthMb),
    });
  }

  if (report.loginStorm) {
    const { logins, healthAlone, healthDuring, rounds, factor } = report.loginStorm;
    out.push({
      measure: '4. login storm POST /v1/login',
      result: `${num(logins.okPerSec, 1)} logins/s, ${num(logins.totalPerSec - logins.okPerSec)} refused/s${nonOk(logins)}`,
      ratio: '',
      budget: '',
      verdict: answered(logins, STORM_REFUSALS) ? '' : 'FAIL',
    });
    out.push({
      measure: '   /health p99 alone -> during, pooled',
      result: aloneToDuring(healthAlone, healthDuring),
      ratio: '',
      budget: '',
      verdict: answered(healthAlone) && answered(healthDuring) ? '' : 'FAIL',
    });
    out.push({
      measure: `   median of ${rounds.length} rounds' factors`,
      result: `x${factor.toFixed(2)} (rounds: ${rounds.map((r) => `x${r.factor.toFixed(2)}`).join(', ')})`,
      ratio: '',
      budget: `health p99 <= ${BUDGETS.stormHealthP99Factor} x alone`,
      verdict: check(factor <= BUDGETS.stormHealthP99Factor),
    });
  }

  if (report.bulk) {
    for (const run of report.bulk) {
      const gated = run.merchants === 100_000 && report.driver === 'postgres';
      const history = run.historyRows === undefined ? '' : `, ${num(run.historyRows)} history rows`;
      out.push({
        measure: `5. bulk-assign/all ${num(run.merchants)} x ${run.plans}`,
        result: `${num(run.seconds, 2)} s, ${num(run.rowsPerSec)} rows/s${history}`,
        ratio: '',
        budget: gated ? `<= ${BUDGETS.bulk100kSecondsPostgres} s` : '',
        verdict: gated ? check(run.seconds <= BUDGETS.bulk100kSecondsPostgres) : '',
      });
      /** The call against one floor; only the floor the budget names (the table itself) is gated. */
      const floorLine = (measure: string, floorSeconds: number | undefined, budgeted: boolean) => {
        if (floorSeconds === undefined) return;
        out.push({
          measure,
          result: `${num(floorSeconds, 2)} s; the call x${(run.seconds / floorSeconds).toFixed(2)}`,
          ratio: '',
          budget: budgeted && gated ? `call <= ${BUDGETS.bulkOverFloor} x floor` : '',
          verdict: budgeted && gated ? check(run.seconds <= BUDGETS.bulkOverFloor * floorSeconds) : '',
        });
      };
      floorLine(
        `   floor: bare INSERT ... SELECT of ${num(run.merchants)} x ${run.plans} rows into the table`,
        run.tableFloorSeconds,
        true,
      );
      floorLine('   the same rows into an empty copy of the table', run.emptyFloorSeconds, false);
      floorLine('   the same rows into a copy holding the current rows', run.occupiedFloorSeconds, false);
      if (run.scheduledSeconds !== undefined) {
        out.push({
          measure: `   scheduled /all ${num(run.merchants)} x ${run.plans}, applied by the worker`,
          result: `${num(run.scheduledSeconds, 2)} s; x${(run.scheduledSeconds / run.seconds).toFixed(2)} the immediate call`,
          ratio: '',
          budget: gated ? `<= ${BUDGETS.scheduledOverImmediate} x the call` : '',
          verdict: gated ? check(run.scheduledSeconds <= BUDGETS.scheduledOverImmediate * run.seconds) : '',
        });
      }
      if (run.dryRunSeconds !== undefined) {
        out.push({
          measure: `   dry run ?dry_run=true ${num(run.merchants)} x ${run.plans}`,
          result: `${num(run.dryRunSeconds, 2)} s`,
          ratio: '',
          budget: gated ? `<= ${BUDGETS.bulkDryRun100kSecondsPostgres} s` : '',
          verdict: gated ? check(run.dryRunSeconds <= BUDGETS.bulkDryRun100kSecondsPostgres) : '',
        });
      }
    }
  }

  if (report.scheduledAll) {
    const run = report.scheduledAll;
    const { healthAlone, healthDuring } = run;
    out.push({
      measure: `5c. scheduled /all ${num(run.merchants)} x ${run.plans}, applied by the service's worker`,
      result: `applied ${num(run.dueToAppliedSeconds, 2)} s after falling due`,
      ratio: '',
      budget: '',
      verdict: '',
    });
    out.push({
      measure: '    /health p99 alone -> while it applies',
      result: aloneToDuring(healthAlone, healthDuring),
      ratio: '',
      budget: `health p99 <= ${BUDGETS.scheduledAllHealthP99Factor} x alone`,
      verdict: check(
        answered(healthAlone) && answered(healthDuring) && run.factor <= BUDGETS.scheduledAllHealthP99Factor,
      ),
    });
  }

  if (report.approvedAll) {
    const run = report.approvedAll;
    const gated = report.driver === 'postgres';
    const seconds = (values: number[]) => values.map((v) => num(v, 2)).join(' and ');
    out.push({
      measure: `5d. approving a held /all ${num(run.merchants)} x ${run.plans} / the /all at once`,
      result: `${seconds(run.approvalSeconds)} s vs ${seconds(run.immediateSeconds)} s (rounds A B B A)`,
      ratio: run.ratio.toFixed(2),
      budget: gated ? `<= ${BUDGETS.approvalOverImmediate} x at once` : '',
      verdict: gated ? check(run.ratio <= BUDGETS.approvalOverImmediate) : '',
    });
  }

  if (report.idempotentCreation) {
    const { without, with: keyed, ratio } = report.idempotentCreation;
    out.push({
      measure: '8. POST /v1/api-keys with Idempotency-Key / without',
      result:
        `${num(keyed.perSec)} vs ${num(without.perSec)} creations/s, ` +
        `p50 ${ms(keyed.p50)} vs ${ms(without.p50)}, p99 ${ms(keyed.p99)} vs ${ms(without.p99)}`,
      ratio: ratio.toFixed(2),
      budget: `>= ${BUDGETS.idempotentCreationRatio.toFixed(2)} x without`,
      verdict: check(ratio >= BUDGETS.idempotentCreationRatio),
    });
    const { replay, replayRatio } = report.idempotentCreation;
    out.push({
      measure: '    replays of one stored key / first requests with a key',
      result:
        `${num(replay.perSec)} vs ${num(keyed.perSec)} answers/s, ` +
        `p50 ${ms(replay.p50)} vs ${ms(keyed.p50)}, p99 ${ms(replay.p99)} vs ${ms(keyed.p99)}`,
      ratio: replayRatio.toFixed(2),
      budget: `>= ${BUDGETS.idempotentReplayRatio.toFixed(2)} x first`,
      verdict: check(replayRatio >= BUDGETS.idempotentReplayRatio),
    });
  }
  if (report.webhooks) {
    const { burst, steady } = report.webhooks;
    const gated = report.driver === 'postgres';
    const complete = (round: WebhookRound) => round.deliveries === round.events;
    const delivered = (round: WebhookRound) =>
      `${num(round.deliveriesPerSec)} deliveries/s (${num(round.deliveries)} in ${num(round.seconds, 1)} s, ${num(round.duplicates)} again)`;
    const latency = (round: WebhookRound) => `p50 ${ms(round.p50Ms)}, p99 ${ms(round.p99Ms)}`;
    out.push({
      measure: `7. webhooks: ${num(burst.events)} events at once to a loopback receiver`,
      result: delivered(burst),
      ratio: '',
      budget: gated ? `>= ${BUDGETS.webhookDeliveriesPerSecPostgres}/s, all` : 'all',
      verdict: check(complete(burst) && (!gated || burst.deliveriesPerSec >= BUDGETS.webhookDeliveriesPerSecPostgres)),
    });
    // No budget: a burst's p99 is its queue, which grows with its size (docs/performance.md, line 7).
    out.push({
      measure: '   commit to receipt, the burst',
      result: latency(burst),
      ratio: '',
      budget: '',
      verdict: '',
    });
    out.push({
      measure: `   ${num(steady.events)} events at ${num(steady.eventsPerSec)}/s`,
      result: delivered(steady),
      ratio: '',
      budget: 'all',
      verdict: check(complete(steady)),
    });
    out.push({
      measure: `   commit to receipt at ${num(steady.eventsPerSec)}/s`,
      result: latency(steady),
      ratio: '',
      budget: gated ? `p99 <= ${BUDGETS.webhookP99MsPostgres} ms` : '',
      verdict: gated ? check(steady.p99Ms <= BUDGETS.webhookP99MsPostgres) : '',
    });
    throughputLine(`   key auth alone, just before`, steady.keyAuthAlone, undefined, steady.ceiling);
    throughputLine(
      `   key auth while delivering ${num(steady.eventsPerSec)}/s`,
      steady.keyAuthDuring,
      BUDGETS.keyAuthWhileDeliveringRatio,
      steady.ceiling,
    );
    processCeilingLine(steady.ceiling);
  }

  if (report.peakRssBytes !== undefined) {
    const mb = report.peakRssBytes / 1024 / 1024;
    const budgetMb = report.driver === 'pglite' ? BUDGETS.peakRssMbEmbedded : BUDGETS.peakRssMb;
    const measure = `6. peak RSS of the server${report.driver === 'pglite' ? ' (database inside)' : ''}`;
    out.push({
      measure,
      result: `${num(mb)} MB`,
      ratio: '',
      budget: `<= ${budgetMb} MB`,
      verdict: check(mb <= budgetMb),
    });
  }
  return out;
}

function nonOk(result: LoadResult): string {
  const other = Object.entries(result.statuses).filter(([code]) => !code.startsWith('2'));
  const parts = other.map(([code, count]) => `${count}x${code}`);
  if (result.errors) parts.push(`${result.errors} errors`);
  return parts.length ? ` [${parts.join(', ')}]` : '';
}

/** A Markdown table: readable in a terminal and pasteable into docs/performance.md. */
export function renderTable(report: BenchReport): string {
  const header = ['Measure', 'Result', 'vs ceiling', 'Budget', 'Verdict'];
  const rows = lines(report).map((l) => [l.measure, l.result, l.ratio, l.budget, l.verdict]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const { settings } = report;
  const title =
    `feegate bench: ${report.driver}, ${report.machine.cpus} CPUs, Node ${report.machine.node}, ${settings.durationSeconds} s per phase, ` +
    `${settings.connections} connections, LOGIN_CONCURRENCY=${settings.loginConcurrency}, whole run ${num(report.seconds)} s`;
  const logged = Object.entries(report.serverLog ?? {}).map(([line, count]) => `  ${count} x ${line}`);
  return [
    title,
    '',
    format(header),
    format(widths.map((w) => '-'.repeat(w))),
    ...rows.map(format),
    ...(logged.length ? ['', 'Service log lines during the run:', ...logged] : []),
  ].join('\n');
}

/** Every failing line, with its result: a budget missed, or an endpoint that answered anything but 2xx under load. */
export function failures(report: BenchReport): string[] {
  return lines(report)
    .filter((l) => l.verdict === 'FAIL')
    .map((l) => `${l.measure.trim()}: ${l.result}`);
}

export function machine(): BenchReport['machine'] {
  return { cpus: os.availableParallelism(), node: process.versions.node, platform: `${os.platform()} ${os.arch()}` };
}

export function writeJson(report: BenchReport): string {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = `${dir}latest-${report.driver === 'pglite' ? 'embedded' : 'postgres'}.json`;
  writeFileSync(file, `${JSON.stringify({ ...report, table: lines(report) }, null, 2)}\n`);
  return file;
}
