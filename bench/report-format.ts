/** The table's line and the formatting its builders share (bench/report-table.ts, bench/report-work-lines.ts). */
import type { LoadResult } from './load.js';
import { STORM_P99_FLOOR_MS, stormFactor } from './report.js';

export type Verdict = 'PASS' | 'FAIL' | '';

export interface Line {
  measure: string;
  result: string;
  ratio: string;
  budget: string;
  verdict: Verdict;
}

export const num = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const ms = (n: number) => `${num(n, n < 1 ? 2 : n < 10 ? 1 : 0)} ms`;
export const check = (ok: boolean): Verdict => (ok ? 'PASS' : 'FAIL');

/** The loaded endpoint answered every request with 2xx, or with a status in `allowed` that the phase measures (the storm's refusals). */
export function answered(result: LoadResult, allowed: readonly string[] = []): boolean {
  return (
    result.errors === 0 && Object.keys(result.statuses).every((code) => code.startsWith('2') || allowed.includes(code))
  );
}

/** FAIL when the endpoint did not answer 2xx under load, whatever the figures; else the budget's verdict, on lines that have one. */
export function verdict(result: LoadResult, withinBudget?: boolean): Verdict {
  if (!answered(result)) return 'FAIL';
  return withinBudget === undefined ? '' : check(withinBudget);
}

/** The 503s a login storm draws are what it measures (refused/s), not a failing endpoint. */
export const STORM_REFUSALS = ['503'];

/** "/health p99 alone -> during (xfactor)", saying when an alone p99 counted as the 1 ms floor. */
export function aloneToDuring(alone: LoadResult, during: LoadResult): string {
  const floored = alone.p99 < STORM_P99_FLOOR_MS ? ` (as ${ms(STORM_P99_FLOOR_MS)})` : '';
  return (
    `${ms(alone.p99)}${floored}${nonOk(alone)} -> ${ms(during.p99)}${nonOk(during)}` +
    ` (x${stormFactor(alone.p99, during.p99).toFixed(2)})`
  );
}

export function nonOk(result: LoadResult): string {
  const other = Object.entries(result.statuses).filter(([code]) => !code.startsWith('2'));
  const parts = other.map(([code, count]) => `${count}x${code}`);
  if (result.errors) parts.push(`${result.errors} errors`);
  return parts.length ? ` [${parts.join(', ')}]` : '';
}
