/**
 * The platform's merchant fields that feegate's first onboarding did not take
 * (contract section 20): v1's `tax`, `phone`, `activity`, `category`,
 * `settlement_condition` and the representative's `representative_id` and
 * `birth_date`, v2's `financial_info` and `address.location`. Writes take
 * them beside v2's; answers carry both generations (merchant-shapes.ts).
 */
import { Type } from '@sinclair/typebox';
import { Pattern, Text } from '../../schemas/common.js';

export const EXAMPLE_SETTLEMENT = {
  transaction_fee: '3.5',
  settlement: 'T+1',
  cbu_or_cvu: '2850590940090418135201',
} as const;
export const EXAMPLE_FINANCIAL_INFO = { tax_condition: 'RESPONSABLE_INSCRIPTO' } as const;

/** A tax condition as the platform spells it: capitals and underscores. */
const TAX_CONDITION_PATTERN = Pattern(
  '^[A-Z][A-Z0-9_]{0,63}$',
  'must be capitals, digits and _, such as RESPONSABLE_INSCRIPTO',
);
export const TaxCondition = Type.String({
  pattern: TAX_CONDITION_PATTERN,
  description:
    'The tax condition, e.g. RESPONSABLE_INSCRIPTO, MONOTRIBUTO; the same fact as financial_info.tax_condition',
  examples: ['RESPONSABLE_INSCRIPTO'],
});

export const PhonePattern = Pattern(
  '^\\+?[0-9][0-9 ()./-]*$',
  'must be a phone number: digits, an optional leading +, spaces, ()./-',
);
export const Phone = (description: string, example: string) =>
  Type.String({ minLength: 4, maxLength: 32, pattern: PhonePattern, description, examples: [example] });

/**
 * The number's shape only: whether it is a valid CUIT or RFC, and fits the
 * merchant's country, is checked by the service (tax-identification.ts), whose
 * refusal is a 400 `invalid_tax_identification` naming the field.
 */
export const TAX_NUMBER_PATTERN = Pattern(
  '^[0-9A-Za-z&Ññ][0-9A-Za-z&Ññ .-]{9,19}$',
  'must be a CUIT (11 digits, dashes allowed) or an RFC (12 or 13 letters and digits)',
);

/**
 * v1's tax: `id` is the CUIT or RFC (the same fact as tax_identification.number;
 * when both are sent they must agree), `type` the tax condition.
 */
export const taxWriteObject = Type.Object(
  {
    id: Type.String({
      pattern: TAX_NUMBER_PATTERN,
      description: 'The CUIT (ARG) or RFC (MEX): the same fact as tax_identification.number',
      examples: ['30712345671'],
    }),
    type: Type.Optional(TaxCondition),
  },
  {
    additionalProperties: false,
    description: "The platform's v1 tax object",
    examples: [{ id: '30712345671', type: 'RESPONSABLE_INSCRIPTO' }],
  },
);

export const taxAnswerObject = Type.Object(
  {
    id: Type.String({ description: 'The CUIT or RFC, compact: tax_identification.number' }),
    type: Type.Union([Type.String(), Type.Null()], {
      description: 'The tax condition, or null: financial_info.tax_condition',
    }),
  },
  { description: "The platform's v1 tax object, kept equal to tax_identification and financial_info.tax_condition" },
);

/** Bank account text; whether it is a CBU or CVU with valid check digits is checked by the service (bank-account.ts). */
const CBU_PATTERN = Pattern('^[0-9][0-9 -]{21,29}$', 'must be a CBU or CVU: 22 digits');
export const settlementObject = Type.Object(
  {
    transaction_fee: Text({ minLength: 1, maxLength: 32, description: 'The fee agreed, as text', examples: ['3.5'] }),
    settlement: Text({ minLength: 1, maxLength: 32, description: 'When funds settle, as text', examples: ['T+1'] }),
    cbu_or_cvu: Type.String({
      pattern: CBU_PATTERN,
      description:
        'The account funds settle to: a CBU or CVU, 22 digits with valid check digits (dashes and spaces are ignored; answered compact)',
      examples: [EXAMPLE_SETTLEMENT.cbu_or_cvu],
    }),
  },
  {
    additionalProperties: false,
    description: "The platform's v1 settlement terms",
    examples: [EXAMPLE_SETTLEMENT],
  },
);

const FINANCIAL_KEY = Pattern('^[a-z][a-z0-9_]{0,63}$', 'must be a lower-case name with _, such as tax_condition');
export const financialInfoObject = Type.Record(
  Type.String({ pattern: FINANCIAL_KEY }),
  Text({ minLength: 1, maxLength: 200 }),
  {
    maxProperties: 32,
    description:
      "The platform's v2 financial information: names to strings; tax_condition is the same fact as tax.type (when both are sent they must agree)",
    examples: [EXAMPLE_FINANCIAL_INFO],
  },
);

export const locationObject = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude, degrees' }),
    lng: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude, degrees' }),
  },
  {
    additionalProperties: false,
    description: 'Where the merchant is on a map: both or neither',
    examples: [{ lat: -34.9214, lng: -57.9545 }],
  },
);

export const identityDocument = Type.Object(
  {
    type: Text({
      minLength: 1,
      maxLength: 32,
      description: 'Kind of document, e.g. DNI, CURP, PASSPORT',
      examples: ['DNI'],
    }),
    number: Text({ minLength: 1, maxLength: 32, description: 'Document number', examples: ['26756539'] }),
  },
  { additionalProperties: false, description: "The representative's identity document" },
);

export const BirthDate = Type.String({
  format: 'date',
  pattern: Pattern('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', 'must be a date, YYYY-MM-DD'),
  description: "The representative's date of birth (YYYY-MM-DD)",
  examples: ['1978-05-21'],
});

export const Activity = Text({
  minLength: 1,
  maxLength: 100,
  description: 'What the merchant does',
  examples: ['Cafetería'],
});
export const Category = Text({
  minLength: 1,
  maxLength: 100,
  description: "The merchant's category, e.g. a merchant category code",
  examples: ['5814'],
});
