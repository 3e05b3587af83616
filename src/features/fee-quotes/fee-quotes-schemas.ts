import { Type } from '@sinclair/typebox';
import { Component, InstantText, Nullable, Text, Timestamp, Uuid } from '../../schemas/common.js';
import { CODE } from '../fee-plans/payment-plans-schemas.js';
import { Pattern } from '../../schemas/common.js';

/** Digits, and a point with digits after it: the rest (decimals, zero, the 10^13 bound) depends on the currency, checked by the service. */
const AMOUNT_PATTERN = Pattern('^[0-9]+(?:[.][0-9]+)?$', 'must be a positive decimal string such as "1234.56"');

/** Transactions in one JSON request; more go in an NDJSON stream. */
export const MAX_JSON_TRANSACTIONS = 1000;
/** The most installments a quote names: a plan's term is at most 999. */
const MAX_INSTALLMENTS = 999;

const transactionFields = {
  id: Type.Optional(
    Text({ minLength: 1, maxLength: 100, description: "The caller's own reference, echoed in the quote" }),
  ),
  merchant_id: Uuid,
  amount: Type.String({
    pattern: AMOUNT_PATTERN,
    description:
      'Positive decimal string with at most the currency\'s ISO 4217 minor-unit digits ("1234.56" in USD, "1500" in CLP), at most 10^13 minor units; a JSON number is refused',
    examples: ['1234.56'],
  }),
  currency: Type.String({
    pattern: '^[A-Za-z]{3}$',
    description: 'ISO 4217 code (taken in any case), e.g. ARS, MXN, USD, BRL, CLP, COP, PEN, UYU, EUR',
    examples: ['ARS'],
  }),
  card_brand: Type.String({ pattern: CODE, description: 'Card brand, any case, e.g. VISA', examples: ['VISA'] }),
  payment_method: Type.String({
    pattern: CODE,
    description: 'Payment method, any case, e.g. CREDIT',
    examples: ['CREDIT'],
  }),
  installments: Type.Integer({
    minimum: 0,
    maximum: MAX_INSTALLMENTS,
    description:
      'Installments: the plan with has_installments = (installments > 1) and term = installments applies (0 for a debit-like plan of term 0)',
  }),
  is_international: Type.Boolean(),
};

const EXAMPLE_TRANSACTION = {
  id: 'order-1001',
  merchant_id: '7b0c9f1e-2d3a-4b5c-8d6e-9f0a1b2c3d4e',
  amount: '1234.56',
  currency: 'ARS',
  card_brand: 'VISA',
  payment_method: 'CREDIT',
  installments: 3,
  is_international: false,
};

/** One quote of EXAMPLE_TRANSACTION: the example of a quote alone and of an answer's first line. */
const EXAMPLE_QUOTE = {
  id: 'order-1001',
  merchant_id: EXAMPLE_TRANSACTION.merchant_id,
  payment_plan_id: '0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  commission: 3.89,
  fee: '48.02',
  net: '1186.54',
  currency: 'ARS',
  at: '2026-03-01T12:00:00.000Z',
};

export const QuoteTransaction = Component(
  'QuoteTransaction',
  Type.Object(transactionFields, {
    additionalProperties: false,
    description: 'A transaction to quote',
    examples: [EXAMPLE_TRANSACTION],
  }),
);

/**
 * One line of an NDJSON request: a transaction, with its own instant if wanted.
 * Not a component: OpenAPI 3.1 cannot type the lines of a stream, so the
 * document names it in QuoteLines' description and the service validates each line with it.
 */
export const QuoteLine = Type.Object(
  {
    ...transactionFields,
    at: Type.Optional(InstantText('The instant of this transaction (default: the request’s)')),
  },
  {
    additionalProperties: false,
    description: 'One line of an application/x-ndjson request: a transaction and optionally its instant',
    examples: [{ ...EXAMPLE_TRANSACTION, at: '2026-03-01T12:00:00Z' }],
  },
);

export const QuoteRequest = Component(
  'QuoteRequest',
  Type.Object(
    {
      at: Type.Optional(InstantText('The instant of every transaction (default now, the same for all)')),
      transactions: Type.Array(Type.Ref('QuoteTransaction'), {
        minItems: 1,
        maxItems: MAX_JSON_TRANSACTIONS,
        description: `1..${MAX_JSON_TRANSACTIONS} transactions, quoted in order`,
      }),
    },
    {
      additionalProperties: false,
      description: 'Transactions to quote at one instant',
      examples: [{ at: '2026-03-01T12:00:00Z', transactions: [EXAMPLE_TRANSACTION] }],
    },
  ),
);

const reference = Nullable(Type.String(), "The transaction's id as sent, null without one");

export const Quote = Component(
  'Quote',
  Type.Object(
    {
      id: reference,
      merchant_id: Type.String({ description: 'The merchant, as sent (lower case)' }),
      payment_plan_id: Type.String({ description: 'The plan in force that priced it' }),
      commission: Type.Number({ description: "The plan's commission, percent" }),
      fee: Type.String({
        description: "amount × commission / 100, half-to-even, with exactly the currency's minor digits",
      }),
      net: Type.String({ description: "amount − fee, with exactly the currency's minor digits" }),
      currency: Type.String({ description: 'ISO 4217 code, upper case' }),
      at: Timestamp,
    },
    {
      description: 'What a transaction pays under the plan in force at `at`',
      examples: [EXAMPLE_QUOTE],
    },
  ),
);

/** Why one transaction was not quoted, while the others were. */
export const QUOTE_REFUSALS = ['no_plan_in_force', 'merchant_not_found', 'merchant_inactive'] as const;
export type QuoteRefusalCode = (typeof QUOTE_REFUSALS)[number];

export const QuoteRefusal = Component(
  'QuoteRefusal',
  Type.Object(
    {
      id: reference,
      merchant_id: Type.String(),
      error: Type.Object({
        code: Type.Union(
          QUOTE_REFUSALS.map((code) => Type.Literal(code)),
          {
            description:
              'no_plan_in_force: the merchant held no matching plan at `at`; merchant_not_found: not a merchant the caller may see; merchant_inactive: the merchant is INACTIVE',
          },
        ),
        detail: Type.String(),
      }),
    },
    { description: 'A transaction of the request that could not be quoted; the others are quoted' },
  ),
);

export const QuoteAnswer = Component(
  'QuoteAnswer',
  Type.Object(
    {
      quotes: Type.Array(Type.Union([Type.Ref('Quote'), Type.Ref('QuoteRefusal')]), {
        description: 'One per transaction, in the order sent',
      }),
    },
    {
      description: 'The quotes of a JSON request',
      examples: [
        {
          quotes: [
            EXAMPLE_QUOTE,
            {
              id: 'order-1002',
              merchant_id: EXAMPLE_TRANSACTION.merchant_id,
              error: {
                code: 'no_plan_in_force',
                detail:
                  'The merchant held no plan with this card_brand, payment_method, is_international and installments at this instant.',
              },
            },
          ],
        },
      ],
    },
  ),
);

const EXAMPLE_LINES = `${JSON.stringify(EXAMPLE_TRANSACTION)}\n${JSON.stringify({ ...EXAMPLE_TRANSACTION, id: 'order-1002', at: '2026-03-01T12:00:00Z' })}\n`;

/**
 * The body of an application/x-ndjson request: lines the service reads itself
 * as they arrive, so no type for the validator to check (a stream is no string).
 */
export const QuoteLines = Component(
  'QuoteLines',
  Type.Unsafe<unknown>({
    description:
      'One QuoteTransaction per line, each with an optional `at` (its instant; default the request’s), UTF-8, separated by \\n; blank lines are skipped',
    examples: [EXAMPLE_LINES],
  }),
);

export const QuoteLinesAnswer = Component(
  'QuoteLinesAnswer',
  Type.Unsafe<unknown>({
    description:
      'One line per transaction line, in order: a Quote, a QuoteRefusal, or a line error { line, error: { code: malformed_json | validation_failed, detail, errors? } }',
    examples: [
      '{"id":"order-1001","merchant_id":"7b0c9f1e-2d3a-4b5c-8d6e-9f0a1b2c3d4e","payment_plan_id":"0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b","commission":3.89,"fee":"48.02","net":"1186.54","currency":"ARS","at":"2026-03-01T12:00:00.000Z"}\n{"line":2,"error":{"code":"malformed_json","detail":"The line is not valid JSON."}}\n',
    ],
  }),
);
