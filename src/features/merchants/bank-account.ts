/**
 * Argentina's bank account identifiers (CBU, and CVU, which shares its
 * layout): 22 digits in two blocks, each ending in a check digit, checked by
 * stdnum, the identifiers library the tax numbers use (tax-identification.ts).
 */
import { createRequire } from 'node:module';
import type { Validator } from 'stdnum';

const requireCjs = createRequire(import.meta.url);
let cbu: Validator | undefined;
const validator = () => (cbu ??= requireCjs('stdnum/lib/cjs/ar/cbu.js') as Validator);

/** The weights of a block's digits, from its last digit leftwards (BCRA's rule, stdnum's weights). */
const WEIGHTS = [3, 1, 7, 9];

/** A block's check digit: (10 − weighted sum) mod 10. */
function checkDigit(block: string): number {
  let sum = 0;
  for (let i = 0; i < block.length; i++) sum += Number(block[block.length - 1 - i]) * WEIGHTS[i % 4]!;
  return (10 - (sum % 10)) % 10;
}

/**
 * stdnum 1.12.0 computes a check digit as 10 − sum without the final mod 10,
 * so it refuses every account whose check digit is 0; only that refusal is
 * looked at again, with the rule written in full.
 */
function passesWhereStdnumMisses(value: string): boolean {
  return checkDigit(value.slice(0, 7)) === Number(value[7]) && checkDigit(value.slice(8, 21)) === Number(value[21]);
}

/** The account in its compact form (22 digits), or why it is refused. */
export function checkBankAccount(text: string): { ok: string } | { refusal: string } {
  const result = validator().validate(text);
  if (result.isValid) return { ok: result.compact };
  if (result.error.name === 'InvalidChecksum') {
    const compact = validator().compact(text);
    if (passesWhereStdnumMisses(compact)) return { ok: compact };
    return { refusal: 'is not a valid CBU or CVU: a check digit is wrong' };
  }
  return { refusal: 'is not a valid CBU or CVU: it must be 22 digits' };
}
