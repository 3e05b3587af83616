/**
 * What a transaction pays, exactly: fee = amount × commission / 100, rounded
 * half-to-even to the currency's minor unit, and net = amount − fee.
 *
 * Integers, in BigInt: the amount in minor units (at most 10^13) times the
 * commission in ten-thousandths of a percent (the column's four decimals) reaches
 * 10^19 and beyond, past the 2^53 up to which a Number holds every integer, and
 * dividing by 10^6 leaves a remainder that decides the rounding exactly. No
 * decimal library is needed for one multiplication and one division, and no
 * binary floating point ever touches an amount.
 */
import currencyCodes from 'currency-codes';

/** The most an amount may be, in minor units of its currency (contract section 24). */
export const MAX_AMOUNT_MINOR_UNITS = 10n ** 13n;
/** An amount's text is bounded before any parsing: 10^13 minor units with separators fits well inside. */
export const MAX_AMOUNT_LENGTH = 32;
/** amount × (commission × 10^4) / 100 / 10^4: the divisor that turns the product back into minor units. */
const DIVISOR = 1_000_000n;
const COMMISSION_DECIMALS = 4;

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

/** An amount in minor units, or what is wrong with its text (the words of a 400's `errors`). */
export function parseAmount(text: string, digits: number): bigint | string {
  const parts = DECIMAL.exec(text);
  if (!parts || text.length > MAX_AMOUNT_LENGTH) return 'must be a positive decimal string such as "1234.56"';
  const decimals = parts[2] ?? '';
  if (decimals.length > digits)
    return digits === 0
      ? 'must have no decimals in this currency'
      : `must have at most ${digits} decimals in this currency`;
  const minor = BigInt(parts[1]! + decimals.padEnd(digits, '0'));
  if (minor === 0n) return 'must be greater than zero';
  if (minor > MAX_AMOUNT_MINOR_UNITS) return 'must be at most 10^13 minor units of its currency';
  return minor;
}

/** Commissions read so far: a catalogue holds few distinct rates, and a stream prices each of them many times. */
const commissions = new Map<string, bigint>();
const MAX_COMMISSIONS_HELD = 10_000;

/** A commission as PostgreSQL prints numeric(12, 4) ("2.4900", "5"), in ten-thousandths of a percent. */
export function commissionTenThousandths(text: string): bigint {
  let value = commissions.get(text);
  if (value === undefined) {
    const [whole, fraction = ''] = text.split('.');
    value = BigInt(whole! + fraction.padEnd(COMMISSION_DECIMALS, '0'));
    if (commissions.size >= MAX_COMMISSIONS_HELD) commissions.clear();
    commissions.set(text, value);
  }
  return value;
}

/** `dividend / DIVISOR` rounded half-to-even (a non-negative dividend). */
function roundHalfEven(dividend: bigint): bigint {
  const quotient = dividend / DIVISOR;
  const twiceRemainder = (dividend % DIVISOR) * 2n;
  if (twiceRemainder > DIVISOR) return quotient + 1n;
  if (twiceRemainder === DIVISOR) return quotient + (quotient % 2n);
  return quotient;
}

/** Minor units as the decimal text of a currency with `digits` minor digits: exactly that many decimals. */
export function formatMinor(minor: bigint, digits: number): string {
  const sign = minor < 0n ? '-' : '';
  const text = (minor < 0n ? -minor : minor).toString().padStart(digits + 1, '0');
  if (digits === 0) return `${sign}${text}`;
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** The fee and net of an amount (minor units) under a commission (ten-thousandths of a percent), in minor units. */
export function feeAndNet(amount: bigint, commission: bigint): { fee: bigint; net: bigint } {
  const fee = roundHalfEven(amount * commission);
  return { fee, net: amount - fee };
}
