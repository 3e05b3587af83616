/**
 * One transaction, from what the caller sent to its quote: the amount read in
 * the currency's minor units, then priced under the plan in force.
 */
import type { FieldError } from '../../errors.js';
import type { HeldPlanRow } from '../fee-plans/plans-in-force.js';
import type { QuoteRefusalCode } from './fee-quotes-schemas.js';
import {
  commissionJson,
  commissionTenThousandths,
  feeAndNet,
  formatMinor,
  minorDigits,
  parseAmount,
} from './quote-arithmetic.js';
import type { PlanKind } from './quote-merchants.js';

/** A transaction as the schema admits it (QuoteTransaction). */
export interface TransactionInput {
  id?: string | undefined;
  merchant_id: string;
  amount: string;
  currency: string;
  card_brand: string;
  payment_method: string;
  installments: number;
  is_international: boolean;
}

/** A transaction whose amount and currency were read. */
export interface Transaction extends PlanKind {
  id: string | null;
  merchantId: string;
  /** Minor units: a safe integer (at most 10^13). */
  amount: number;
  currency: string;
  digits: number;
}

interface QuoteRefusalResource {
  id: string | null;
  merchant_id: string;
  error: { code: QuoteRefusalCode; detail: string };
}

const REFUSAL_DETAILS: Record<QuoteRefusalCode, string> = {
  no_plan_in_force:
    'The merchant held no plan with this card_brand, payment_method, is_international and installments at this instant.',
  merchant_not_found: 'No merchant with this merchant_id that the caller may see.',
  merchant_inactive: 'The merchant is INACTIVE.',
};

/** The transaction with its amount in minor units, or the fields that are wrong (names relative to the transaction). */
export function readTransaction(input: TransactionInput): Transaction | FieldError[] {
  const currency = input.currency.toUpperCase();
  const digits = minorDigits(currency);
  if (digits === undefined) return [{ field: 'currency', message: 'is not an ISO 4217 currency the service quotes' }];
  const amount = parseAmount(input.amount, digits);
  if (typeof amount === 'string') return [{ field: 'amount', message: amount }];
  return {
    id: input.id ?? null,
    merchantId: input.merchant_id,
    amount,
    currency,
    digits,
    cardBrand: input.card_brand.toUpperCase(),
    paymentMethod: input.payment_method.toUpperCase(),
    isInternational: input.is_international,
    installments: input.installments,
  };
}

/**
 * The quote of `transaction` under `plan`, or its refusal, as JSON text. A quote
 * is written directly: building and serialising an object per quote was the
 * stream's largest cost (and the JSON answer's serialiser tells a quote from a
 * refusal by validating each against both schemas). Keys in the order of the Quote schema; every value is JSON-safe
 * as it stands (checked UUIDs, an upper-case code, digits, an ISO instant)
 * except the caller's id, which is escaped.
 */
export function quoteText(transaction: Transaction, plan: HeldPlanRow | QuoteRefusalCode, at: string): string {
  const { id, merchantId, digits } = transaction;
  if (typeof plan === 'string') {
    const refusal: QuoteRefusalResource = {
      id,
      merchant_id: merchantId,
      error: { code: plan, detail: REFUSAL_DETAILS[plan] },
    };
    return JSON.stringify(refusal);
  }
  const { fee, net } = feeAndNet(transaction.amount, commissionTenThousandths(plan.commission));
  return `{"id":${id === null ? 'null' : JSON.stringify(id)},"merchant_id":"${merchantId}","payment_plan_id":"${plan.id}","commission":${commissionJson(plan.commission)},"fee":"${formatMinor(fee, digits)}","net":"${formatMinor(net, digits)}","currency":"${transaction.currency}","at":"${at}"}`;
}
