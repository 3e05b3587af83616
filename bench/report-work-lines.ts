/**
 * The table's lines of the write-heavy phases (quotes, audit export, login storm,
 * bulk and scheduled assignment, approval, idempotency, webhooks), apart from
 * bench/report-table.ts to keep each file readable.
 */
import type { LoadResult } from './load.js';
import type { WebhookRound } from './webhooks.js';
import { BUDGETS, type BenchReport, type ProcessCeiling } from './report.js';
import { type Line, STORM_REFUSALS, aloneToDuring, answered, check, ms, nonOk, num } from './report-format.js';

/** What the lines before them built: the list and the two line makers they share. */
export interface LineKit {
  out: Line[];
  throughputLine(measure: string, value: LoadResult | undefined, min?: number, own?: ProcessCeiling): void;
  processCeilingLine(own: ProcessCeiling | undefined): void;
}

export function pushWorkLines(report: BenchReport, kit: LineKit): void {
  const { out, throughputLine, processCeilingLine } = kit;
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
}
