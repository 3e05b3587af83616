import { Type } from '@sinclair/typebox';
import { Component, Listing, PageQuery, Pattern, Uuid } from '../../schemas/common.js';
import { PaymentPlan } from './payment-plans-schemas.js';

/** Operator-defined codes, taken in any case and stored upper-case. */
const CODE = Pattern('^[A-Za-z0-9_]{1,32}$', 'must be 1..32 letters, digits or _');
const Code = (description: string, example: string) => Type.String({ pattern: CODE, description, examples: [example] });

const Owner = Type.Union([Type.Literal('PLATFORM'), Type.Literal('CUSTOMER')], {
  description: "PLATFORM: offered to every customer; CUSTOMER: the caller customer's own",
});
const Status = Type.Union([Type.Literal('ACTIVE'), Type.Literal('RETIRED')], {
  description: 'ACTIVE: assignable; RETIRED: no longer assignable, kept by the merchants that hold it',
});

const { is_selected: _selected, ...planProperties } = PaymentPlan.properties;

const EXAMPLE = {
  id: '0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  payment_method: 'CREDIT',
  term: 3,
  commission: 2.49,
  card_brand: 'VISA',
  has_installments: true,
  is_international: false,
  owner: 'CUSTOMER',
  status: 'ACTIVE',
};

export const FeeRule = Component(
  'FeeRule',
  Type.Object(
    { ...planProperties, owner: Owner, status: Status },
    {
      description: 'A payment plan (fee rule) of the catalogue, with whose it is and whether it is assignable',
      examples: [EXAMPLE],
    },
  ),
);

export const FeeRuleListing = Listing(FeeRule, 'FeeRuleListing', {
  description: 'A page of the fee-rule catalogue, newest first',
  examples: [{ data: [EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

export const FeeRuleListQuery = Type.Object(
  {
    ...PageQuery,
    card_brand: Type.Optional(Code('Only plans of this card brand, any case, e.g. VISA', 'VISA')),
    payment_method: Type.Optional(Code('Only plans of this payment method, any case, e.g. CREDIT', 'CREDIT')),
    status: Type.Optional(
      Type.Union([Type.Literal('ACTIVE'), Type.Literal('RETIRED')], {
        default: 'ACTIVE',
        description: 'ACTIVE (default) or RETIRED plans',
      }),
    ),
    owner: Type.Optional(Owner),
  },
  { additionalProperties: false },
);

export const NewFeeRuleBody = Component(
  'NewFeeRuleRequest',
  Type.Object(
    {
      payment_method: Code('Upper-case code (taken in any case), e.g. CREDIT, DEBIT, PREPAID, QR', 'CREDIT'),
      card_brand: Code('Upper-case code (taken in any case), e.g. VISA, MASTERCARD, AMEX, ELO', 'VISA'),
      term: Type.Integer({ minimum: 0, maximum: 999, description: 'Number of installments (0..999)' }),
      commission: Type.Number({
        minimum: 0,
        maximum: 99_999_999.9999,
        multipleOf: 0.0001,
        description: 'Percentage of the transaction amount, at most 4 decimals, stored exactly',
      }),
      has_installments: Type.Boolean(),
      is_international: Type.Boolean(),
    },
    {
      additionalProperties: false,
      description: "A plan of the caller customer's own; it never changes once made",
      examples: [
        {
          payment_method: 'CREDIT',
          card_brand: 'VISA',
          term: 3,
          commission: 2.49,
          has_installments: true,
          is_international: false,
        },
      ],
    },
  ),
);

export const FeeRuleParams = Type.Object({ id: Uuid });
