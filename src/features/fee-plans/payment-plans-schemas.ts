import { Type } from '@sinclair/typebox';
import { Component, Listing, PageQuery, Pattern, Uuid } from '../../schemas/common.js';

/** Operator-defined codes (card brands, payment methods); filters and quotes accept them in any case. */
export const CODE = Pattern('^[A-Za-z0-9_]{1,32}$', 'must be 1..32 letters, digits or _');
const CodeFilter = (description: string, example: string) =>
  Type.String({ pattern: CODE, description, examples: [example] });

export const PaymentPlanListQuery = Type.Object(
  {
    ...PageQuery,
    merchant_id: Type.Optional(
      Type.String({
        ...Uuid,
        description:
          'Merchant whose assignments set is_selected. A merchant caller: defaults to itself, may name only itself.',
      }),
    ),
    card_brand: Type.Optional(CodeFilter('Only plans of this card brand, e.g. VISA', 'VISA')),
    payment_method: Type.Optional(CodeFilter('Only plans of this payment method, e.g. CREDIT', 'CREDIT')),
    is_selected: Type.Optional(
      Type.Boolean({
        description: 'Only plans assigned (true) or not assigned (false) to merchant_id; needs merchant_id',
      }),
    ),
  },
  { additionalProperties: false },
);

const EXAMPLE = {
  id: '0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  payment_method: 'CREDIT',
  term: 3,
  commission: 2.49,
  card_brand: 'VISA',
  is_selected: true,
  has_installments: true,
  is_international: false,
};

export const PaymentPlan = Component(
  'PaymentPlan',
  Type.Object(
    {
      id: Uuid,
      payment_method: Type.String({ description: 'Upper-case code, e.g. CREDIT, DEBIT, PREPAID, QR' }),
      term: Type.Integer({
        minimum: 0,
        description: 'Number of installments (0 for debit-like methods, 1 for a single payment)',
      }),
      commission: Type.Number({
        minimum: 0,
        multipleOf: 0.0001,
        description: 'Percentage of the transaction amount, up to 4 decimals, stored exactly',
      }),
      card_brand: Type.String({ description: 'Upper-case code, e.g. VISA, MASTERCARD, AMEX, ELO' }),
      is_selected: Type.Boolean({ description: 'Assigned to merchant_id (always false without merchant_id)' }),
      has_installments: Type.Boolean(),
      is_international: Type.Boolean(),
    },
    { description: 'A payment plan (fee rule) of the catalogue', examples: [EXAMPLE] },
  ),
);

export const PaymentPlanListing = Listing(PaymentPlan, 'PaymentPlanListing', {
  description: 'A page of the catalogue, newest first',
  examples: [{ data: [EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});
