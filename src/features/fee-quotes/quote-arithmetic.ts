/**
 * What a transaction pays, exactly: fee = amount × commission / 100, rounded
 * half-to-even to the currency's minor unit, and net = amount − fee.
 *
 * Integers only: the amount in minor units (at most 10^13) times the commission
 * in ten-thousandths of a percent (the column's four decimals), divided by 10^6
 * with the remainder deciding the rounding exactly. While the product stays
 * within 2^53 (every amount up to 10^13 at a commission up to 0.09%, and any
 * everyday amount at any everyday rate) a Number holds it exactly and is several
 * times cheaper per quote than BigInt, which a stream of a million quotes feels;
 * beyond that the same steps run in BigInt. No decimal library is needed for one
 * multiplication and one division, and no binary floating point ever rounds an amount.
 */
import currencyCodes from 'currency-codes';
import { COMMISSION_DECIMALS } from '../../lib/commission.js';

/** The most an amount may be, in minor units of its currency (contract section 24). */
export const MAX_AMOUNT_MINOR_UNITS = 10 ** 13;
/** An amount's text is bounded before any parsing: 10^13 minor units with separators fits well inside. */
export const MAX_AMOUNT_LENGTH = 32;
/** amount × (commission × 10^4) / 100 / 10^4: the divisor that turns the product back into minor units. */
const DIVISOR = 1_000_000;
const BIG_DIVISOR = BigInt(DIVISOR);

/** Minor units: a Number while it is a safe integer, a BigInt beyond. */
export type Minor = number | bigint;

/**
 * ISO 4217 codes that are no money a card pays in: precious metals, IMF units,
 * bond-market units, the testing code and "no currency". Everything else in
 * currency-codes (the ISO 4217 maintenance agency's list, with each code's
 * minor-unit exponent) is quoted.
 */
const NOT_MONEY = new Set(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);

/** Minor-unit digits by currency code (ARS, MXN, USD, BRL: 2; CLP: 0; BHD: 3; …). */
const MINOR_DIGITS: ReadonlyMap<string, number> = new Map(
  currencyCodes.data.filter((c) => !NOT_MONEY.has(c.code)).map((c) => [c.code, c.digits]),
);

/** The currency's minor-unit digits, or undefined for a code the service does not quote. */
export function minorDigits(currency: string): number | undefined {
  return MINOR_DIGITS.get(currency);
}

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;

/**
 * An amount in minor units, or what is wrong with its text (the words of a 400's
 * `errors`). A Number: every amount admitted (at most 10^13) is a safe integer,
 * and a longer digit string can only read larger, so the bound still refuses it.
 */
export function parseAmount(text: string, digits: number): number | string {
  const parts = DECIMAL.exec(text);
  if (!parts || text.length > MAX_AMOUNT_LENGTH) return 'must be a positive decimal string such as "1234.56"';
  const decimals = parts[2] ?? '';
  if (decimals.length > digits)
    return digits === 0
      ? 'must have no decimals in this currency'
      : `must have at most ${digits} decimals in this currency`;
  const minor = Number(parts[1]! + decimals.padEnd(digits, '0'));
  if (minor === 0) return 'must be greater than zero';
  if (minor > MAX_AMOUNT_MINOR_UNITS) return 'must be at most 10^13 minor units of its currency';
  return minor;
}

/** A commission read: in ten-thousandths of a percent, and as the answer's JSON number. */
interface Commission {
  tenThousandths: number;
  json: string;
}

/** Commissions read so far: a catalogue holds few distinct rates, and a stream prices each of them many times. */
const commissions = new Map<string, Commission>();
const MAX_COMMISSIONS_HELD = 10_000;

/** A commission as PostgreSQL prints numeric(12, 4) ("2.4900", "5"), read once. */
function commissionOf(text: string): Commission {
  let value = commissions.get(text);
  if (value === undefined) {
    const [whole, fraction = ''] = text.split('.');
    value = {
      // Below 10^12: a safe integer.
      tenThousandths: Number(whole! + fraction.padEnd(COMMISSION_DECIMALS, '0')),
      json: JSON.stringify(Number(text)),
    };
    if (commissions.size >= MAX_COMMISSIONS_HELD) commissions.clear();
    commissions.set(text, value);
  }
  return value;
}

/** A commission in ten-thousandths of a percent. */
export const commissionTenThousandths = (text: string): number => commissionOf(text).tenThousandths;
/** A commission as the answer's JSON number (contract section 5: a JSON number), e.g. "2.4900" → "2.49". */
export const commissionJson = (text: string): string => commissionOf(text).json;

/** `dividend / DIVISOR` rounded half-to-even (a non-negative dividend beyond 2^53). */
function roundHalfEvenBig(dividend: bigint): bigint {
  const quotient = dividend / BIG_DIVISOR;
  const twiceRemainder = (dividend % BIG_DIVISOR) * 2n;
  if (twiceRemainder > BIG_DIVISOR) return quotient + 1n;
  if (twiceRemainder === BIG_DIVISOR) return quotient + (quotient % 2n);
  return quotient;
}

/**
 * `dividend / DIVISOR` rounded half-to-even (a non-negative safe integer). The
 * remainder first: `%` of integers is exact, and so is dividing the multiple of
 * DIVISOR left, where `Math.floor(dividend / DIVISOR)` could round up across an integer.
 */
function roundHalfEven(dividend: number): number {
  const remainder = dividend % DIVISOR;
  const quotient = (dividend - remainder) / DIVISOR;
  const twiceRemainder = remainder * 2;
  if (twiceRemainder > DIVISOR) return quotient + 1;
  if (twiceRemainder === DIVISOR) return quotient + (quotient % 2);
  return quotient;
}

/** Minor units as the decimal text of a currency with `digits` minor digits: exactly that many decimals. */
export function formatMinor(minor: Minor, digits: number): string {
  const negative = minor < 0;
  const text = (negative ? -minor : minor).toString().padStart(digits + 1, '0');
  const sign = negative ? '-' : '';
  if (digits === 0) return `${sign}${text}`;
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** The fee and net of an amount (minor units) under a commission (ten-thousandths of a percent), in minor units. */
export function feeAndNet(amount: number, commission: number): { fee: Minor; net: Minor } {
  // Exact: a true product up to 2^53 − 1 is computed exactly, and a larger one never reads as that small.
  const product = amount * commission;
  if (product <= Number.MAX_SAFE_INTEGER) {
    const fee = roundHalfEven(product);
    return { fee, net: amount - fee };
  }
  const fee = roundHalfEvenBig(BigInt(amount) * BigInt(commission));
  return { fee, net: BigInt(amount) - fee };
}
