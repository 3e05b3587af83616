/**
 * A payment plan's commission: a percentage kept exactly in NUMERIC(12, 4). The
 * API (POST /v1/fee-rules), the import and the quotes read it by these rules.
 */

/** Digits after the point a commission keeps. */
export const COMMISSION_DECIMALS = 4;

/**
 * The commission as the exact decimal text stored, or undefined when it has more
 * than COMMISSION_DECIMALS decimals: a schema's multipleOf has a tolerance, and
 * the column would round a fifth decimal away without a word.
 */
export function exactCommission(commission: number): string | undefined {
  const text = commission.toFixed(COMMISSION_DECIMALS);
  return Number(text) === commission ? text : undefined;
}
