/**
 * Turns one run's measurements (bench/report.ts) into the printed table, the
 * budget verdicts and the JSON file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MAX_MERCHANT_PAGE_SIZE as MERCHANT_PAGE } from '../src/features/merchants/merchant-answer-schemas.js';
import type { LoadResult } from './load.js';
import { BUDGETS, type BenchReport, type ProcessCeiling, processCeilingPerSec } from './report.js';
import { type Line, answered, check, ms, nonOk, num, verdict } from './report-format.js';
import { pushWorkLines } from './report-work-lines.js';

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
    const { off, on, ratio, spans, tracedPeakRssBytes } = report.tracedKeyAuth;
    const tracedRss =
      tracedPeakRssBytes === undefined ? '' : `, traced peak RSS ${num(tracedPeakRssBytes / 1024 / 1024)} MB`;
    out.push({
      measure: '2d. key auth, tracing at 0.1 / off',
      result:
        `${num(on.okPerSec)} vs ${num(off.okPerSec)} req/s, ` +
        `p99 ${ms(on.p99)} vs ${ms(off.p99)}, ${spans} spans received${tracedRss}${nonOk(on)}${nonOk(off)}`,
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
  pushWorkLines(report, { out, throughputLine, processCeilingLine });

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

export function writeJson(report: BenchReport): string {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const file = `${dir}latest-${report.driver === 'pglite' ? 'embedded' : 'postgres'}.json`;
  writeFileSync(file, `${JSON.stringify({ ...report, table: lines(report) }, null, 2)}\n`);
  return file;
}
