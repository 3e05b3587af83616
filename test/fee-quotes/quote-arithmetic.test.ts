/**
 * The arithmetic of a quote against a reference in BigInt rationals: for every
 * amount up to 10^13 minor units and every commission with four decimals, the
 * fee is the nearest minor unit to amount × commission / 100 (the even one on
 * an exact half) and net = amount − fee, printed with the currency's digits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  commissionTenThousandths,
  feeAndNet,
  formatMinor,
  MAX_AMOUNT_MINOR_UNITS,
  minorDigits,
  parseAmount,
} from '../../src/features/fee-quotes/quote-arithmetic.js';

/** A rational number as numerator / denominator (denominator > 0). */
type Rational = [bigint, bigint];

/** "1234.56" as a rational, read digit by digit. */
function rationalOf(text: string): Rational {
  const [whole, fraction = ''] = text.split('.');
  return [BigInt(whole! + fraction), 10n ** BigInt(fraction.length)];
}

/** The integer nearest to n/d (n ≥ 0), the even one of two equally near: by comparing distances, not remainders. */
function nearestEven([n, d]: Rational): bigint {
  const below = n / d;
  const above = below + 1n;
  // |n/d − below| vs |above − n/d|, both times d.
  const toBelow = n - below * d;
  const toAbove = above * d - n;
  if (toBelow < toAbove) return below;
  if (toAbove < toBelow) return above;
  return below % 2n === 0n ? below : above;
}

/** The reference quote of `amountText` under `commissionText` percent, in minor units of a currency with `digits`. */
function reference(amountText: string, commissionText: string, digits: number) {
  const [an, ad] = rationalOf(amountText);
  const [cn, cd] = rationalOf(commissionText);
  // fee in minor units = amount × commission / 100 × 10^digits
  const fee = nearestEven([an * cn * 10n ** BigInt(digits), ad * cd * 100n]);
  const amountMinor = (an * 10n ** BigInt(digits)) / ad;
  return { fee, net: amountMinor - fee };
}

/** Minor units as text with `digits` decimals, built another way than formatMinor (a rational printed). */
function printed(minor: bigint, digits: number): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const scale = 10n ** BigInt(digits);
  const fraction = digits === 0 ? '' : `.${(abs % scale).toString().padStart(digits, '0')}`;
  return `${negative ? '-' : ''}${abs / scale}${fraction}`;
}

const amountText = (minor: bigint, digits: number) => printed(minor, digits);

describe('quote arithmetic', () => {
  it('equals BigInt rational arithmetic for amounts up to 10^13 minor units and four-decimal commissions', () => {
    fc.assert(
      fc.property(
        // The whole range, and everyday amounts whose products stay within 2^53 (the Number path) more often.
        fc.oneof(fc.bigInt({ min: 1n, max: BigInt(MAX_AMOUNT_MINOR_UNITS) }), fc.bigInt({ min: 1n, max: 10n ** 9n })),
        fc.bigInt({ min: 0n, max: 1_000_000n }),
        fc.constantFrom('USD', 'ARS', 'CLP', 'BHD', 'JPY', 'EUR'),
        fc.boolean(),
        (minor, commission, currency, trimZeros) => {
          const digits = minorDigits(currency)!;
          let text = amountText(minor, digits);
          // "12.50" and "12.5" are the same amount.
          if (trimZeros && text.includes('.')) text = text.replace(/0+$/, '').replace(/\.$/, '');
          const commissionText = printed(commission, 4);
          const amount = parseAmount(text, digits);
          assert.equal(amount, Number(minor));
          const { fee, net } = feeAndNet(amount as number, commissionTenThousandths(commissionText));
          const expected = reference(text, commissionText, digits);
          assert.equal(BigInt(fee), expected.fee);
          assert.equal(BigInt(net), expected.net);
          assert.equal(formatMinor(fee, digits), printed(expected.fee, digits));
          assert.equal(formatMinor(net, digits), printed(expected.net, digits));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('rounds an exact half to the even minor unit, down and up', () => {
    const usd = minorDigits('USD')!;
    const half = (amount: string, commission: string) =>
      feeAndNet(parseAmount(amount, usd) as number, commissionTenThousandths(commission));
    // 0.20 × 2.5% = 0.005: between 0.00 and 0.01, to the even 0.00 (down).
    assert.deepEqual(half('0.20', '2.5000'), { fee: 0, net: 20 });
    // 0.60 × 2.5% = 0.015: between 0.01 and 0.02, to the even 0.02 (up).
    assert.deepEqual(half('0.60', '2.5000'), { fee: 2, net: 58 });
    // Not a half: 0.0151 goes up, 0.0049 down, whatever is even.
    assert.deepEqual(half('1.51', '1.0000'), { fee: 2, net: 149 });
    assert.deepEqual(half('0.49', '1.0000'), { fee: 0, net: 49 });
    // CLP has no minor digits: 1500 × 2.99% = 44.85 → 45; 100 × 2.5% = 2.5 → 2; 300 × 2.5% = 7.5 → 8.
    const clp = minorDigits('CLP')!;
    assert.equal(clp, 0);
    const inPesos = (amount: string, commission: string) =>
      feeAndNet(parseAmount(amount, clp) as number, commissionTenThousandths(commission));
    assert.deepEqual(inPesos('1500', '2.99'), { fee: 45, net: 1455 });
    assert.deepEqual(inPesos('100', '2.5'), { fee: 2, net: 98 });
    assert.deepEqual(inPesos('300', '2.5'), { fee: 8, net: 292 });
  });

  it('prints exactly the currency minor digits', () => {
    assert.equal(formatMinor(5n, 2), '0.05');
    assert.equal(formatMinor(5n, 3), '0.005');
    assert.equal(formatMinor(1455n, 0), '1455');
    assert.equal(formatMinor(0n, 2), '0.00');
    assert.equal(formatMinor(-150n, 2), '-1.50');
    // Numbers (safe integers) print as BigInts do.
    assert.equal(formatMinor(5, 3), '0.005');
    assert.equal(formatMinor(-150, 2), '-1.50');
    assert.equal(formatMinor(10 ** 13, 2), '100000000000.00');
  });

  it('reads amounts only as positive decimal text within the currency digits and 10^13 minor units', () => {
    assert.equal(parseAmount('10000000000000', 0), 10 ** 13);
    assert.equal(parseAmount('100000000000.00', 2), 10 ** 13);
    assert.match(String(parseAmount('100000000000.01', 2)), /at most 10\^13 minor units/);
    assert.match(String(parseAmount('1.234', 2)), /at most 2 decimals/);
    assert.match(String(parseAmount('1500.5', 0)), /no decimals/);
    assert.match(String(parseAmount('0', 2)), /greater than zero/);
    assert.match(String(parseAmount('0.00', 2)), /greater than zero/);
    for (const bad of ['-1', '1e3', '1,5', ' 1', '.5', '5.', '', '0x10'])
      assert.match(String(parseAmount(bad, 2)), /positive decimal string/, bad);
  });

  it('knows the currencies of the region and refuses codes that are no money', () => {
    const expected = { ARS: 2, MXN: 2, USD: 2, BRL: 2, CLP: 0, COP: 2, PEN: 2, UYU: 2, EUR: 2 };
    for (const [code, digits] of Object.entries(expected)) assert.equal(minorDigits(code), digits, code);
    for (const code of ['XAU', 'XTS', 'XXX', 'ABC', 'usd']) assert.equal(minorDigits(code), undefined, code);
  });
});
