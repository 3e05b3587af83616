/** What a customer sends for a merchant: the fields, and the create and update bodies (the answers: merchant-answer-schemas.ts). */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Component, Email, Nullable, Ref, Text, Uuid } from '../../schemas/common.js';
import {
  Activity,
  BirthDate,
  Category,
  EXAMPLE_FINANCIAL_INFO,
  EXAMPLE_SETTLEMENT,
  financialInfoObject,
  identityDocument,
  locationObject,
  Phone,
  settlementObject,
  TAX_NUMBER_PATTERN,
  taxWriteObject,
} from './merchant-v1-schemas.js';

/** A string of one of `values`: a plain enum, so that it can also be nullable. */
function Enum<const T extends readonly string[]>(values: T, description: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}

export const COUNTRIES = ['ARG', 'MEX'] as const;
export const LEGAL_TYPES = ['NATURAL_PERSON', 'LEGAL_ENTITY'] as const;
export const MERCHANT_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type Country = (typeof COUNTRIES)[number];
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

export const Country = Enum(COUNTRIES, 'ISO 3166-1 alpha-3: ARG (Argentina) or MEX (Mexico)');
export const LegalType = Enum(
  LEGAL_TYPES,
  'NATURAL_PERSON (a person trading in their own name) or LEGAL_ENTITY (a company)',
);
export const Status = Enum(
  MERCHANT_STATUSES,
  'ACTIVE, or INACTIVE: its keys are refused and it gets no new payment plans',
);

const Name = (description: string, example: string) =>
  Text({ minLength: 1, maxLength: 200, description, examples: [example] });
const Short = (maxLength: number, description: string, example: string) =>
  Text({ minLength: 1, maxLength, description, examples: [example] });

export const EXAMPLE_ADDRESS = {
  state: 'Buenos Aires',
  city: 'La Plata',
  zip: 'B1900AAA',
  street: 'Calle 7',
  number: '1234',
  floor: '2',
  apartment: 'B',
  location: { lat: -34.9214, lng: -57.9545 },
};
export const EXAMPLE_TAX = { type: 'CUIT', number: '30712345671' } as const;
const EXAMPLE_REPRESENTATIVE = {
  type: 'PRESIDENT',
  name: 'Ana',
  surname: 'García',
  identification: { type: 'DNI', number: '26756539' },
  email: 'ana.garcia@example.com',
  phone: '+54 221 555 0100',
} as const;
const EXAMPLE_REPRESENTATIVE_V1 = {
  type: 'PRESIDENT',
  name: 'Ana',
  surname: 'García',
  representative_id: { type: 'DNI', number: '26756539' },
  birth_date: '1978-05-21',
  email: 'ana.garcia@example.com',
  phone: '+54 221 555 0100',
} as const;

/** Both generations at once, agreeing: what the answer carries. */
export const EXAMPLE_REPRESENTATIVE_BOTH = {
  ...EXAMPLE_REPRESENTATIVE_V1,
  identification: EXAMPLE_REPRESENTATIVE.identification,
};

const addressFields = {
  state: Short(100, 'State or province', 'Buenos Aires'),
  city: Short(100, 'City', 'La Plata'),
  zip: Short(16, 'Postal code', 'B1900AAA'),
  street: Short(200, 'Street', 'Calle 7'),
  number: Short(16, 'Street number', '1234'),
  floor: Type.Optional(Short(16, 'Floor', '2')),
  apartment: Type.Optional(Short(16, 'Apartment', 'B')),
  location: Type.Optional(locationObject),
};
export const addressObject = Type.Object(addressFields, {
  additionalProperties: false,
  description: "The merchant's address",
  examples: [EXAMPLE_ADDRESS],
});
export const MerchantAddress = Component('MerchantAddress', addressObject);

export const taxObject = Type.Object(
  {
    type: Enum(['CUIT', 'RFC'] as const, 'CUIT for a merchant in ARG, RFC for one in MEX'),
    number: Type.String({
      pattern: TAX_NUMBER_PATTERN,
      description:
        'A CUIT with a valid check digit, or an RFC with a valid format and check character; dashes and spaces are ignored and the number is answered in its compact form (digits, an RFC in upper case)',
      examples: [EXAMPLE_TAX.number],
    }),
  },
  { additionalProperties: false, description: "The merchant's tax identifier", examples: [EXAMPLE_TAX] },
);
export const TaxIdentification = Component('TaxIdentification', taxObject);

const representativeCommon = {
  type: Enum(['PRESIDENT', 'PROXY', 'OTHER'] as const, 'What the person is to the merchant'),
  name: Short(100, 'Given name', 'Ana'),
  surname: Short(100, 'Surname', 'García'),
  email: Email,
  phone: Phone('Phone number, international form recommended', EXAMPLE_REPRESENTATIVE.phone),
};
/** The representative as the API takes it: the document as v2's identification or v1's representative_id (equal when both). */
const representativeWriteObject = Type.Object(
  {
    ...representativeCommon,
    identification: Type.Optional(identityDocument),
    representative_id: Type.Optional({
      ...identityDocument,
      description: "The platform's v1 name of identification: the same document (when both are sent they must agree)",
    }),
    birth_date: Type.Optional(BirthDate),
  },
  {
    additionalProperties: false,
    description: 'The person who represents the merchant: identification or representative_id is required',
    examples: [EXAMPLE_REPRESENTATIVE_BOTH, EXAMPLE_REPRESENTATIVE, EXAMPLE_REPRESENTATIVE_V1],
  },
);
export const Representative = Component('MerchantRepresentative', representativeWriteObject);
export const representativeAnswerObject = Type.Object(
  {
    ...representativeCommon,
    identification: identityDocument,
    representative_id: { ...identityDocument, description: 'identification, under its v1 name' },
    birth_date: Nullable(BirthDate, 'Date of birth, or null'),
  },
  { description: 'The person who represents the merchant, both generations of the record' },
);

const AdditionalInfo = Text({
  minLength: 1,
  maxLength: 1000,
  description: 'Free text for the customer',
  examples: ['Open weekends'],
});
const MerchantCode = Text({
  minLength: 1,
  maxLength: 64,
  description: "The customer's own code for the merchant, unique within the customer (409 merchant_code_conflict)",
  examples: ['LP-0001'],
});

export const EXAMPLE_CREATE = {
  customer_id: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  country: 'ARG',
  legal_type: 'LEGAL_ENTITY',
  business_name: 'Cafetería La Plata S.A.',
  fantasy_name: 'Café 7',
  additional_info: 'Open weekends',
  email: 'admin@cafe7.example.com',
  merchant_code: 'LP-0001',
  address: EXAMPLE_ADDRESS,
  tax_identification: EXAMPLE_TAX,
  representative: EXAMPLE_REPRESENTATIVE_BOTH,
  tax: { id: EXAMPLE_TAX.number, type: EXAMPLE_FINANCIAL_INFO.tax_condition },
  financial_info: EXAMPLE_FINANCIAL_INFO,
  phone: '+54 221 555 0199',
  activity: 'Cafetería',
  category: '5814',
  settlement_condition: EXAMPLE_SETTLEMENT,
};
/** The same merchant in the platform's v1 shape. */
const EXAMPLE_CREATE_V1 = {
  customer_id: EXAMPLE_CREATE.customer_id,
  country: 'ARG',
  legal_type: 'LEGAL_ENTITY',
  business_name: EXAMPLE_CREATE.business_name,
  fantasy_name: EXAMPLE_CREATE.fantasy_name,
  email: EXAMPLE_CREATE.email,
  address: EXAMPLE_ADDRESS,
  tax: { id: EXAMPLE_TAX.number, type: 'RESPONSABLE_INSCRIPTO' },
  phone: '+54 221 555 0199',
  activity: 'Cafetería',
  category: '5814',
  settlement_condition: EXAMPLE_SETTLEMENT,
  representative: EXAMPLE_REPRESENTATIVE_V1,
};

/** The v1 fields a write may send besides v2's (all optional; a PATCH may clear them with null). */
const v1WriteFields = {
  tax: taxWriteObject,
  phone: Phone("The merchant's phone number", '+54 221 555 0199'),
  activity: Activity,
  category: Category,
  settlement_condition: settlementObject,
  financial_info: financialInfoObject,
};

/** The fields of a merchant a customer sends, in either generation: shared by the create body and the operator's import. */
export const merchantFields = {
  legal_type: LegalType,
  business_name: Name('Registered (legal) name', 'Cafetería La Plata S.A.'),
  fantasy_name: Name("Trading name, shown as the merchant's name", 'Café 7'),
  additional_info: AdditionalInfo,
  email: { ...Email, description: "The merchant's contact e-mail" },
  merchant_code: MerchantCode,
  address: addressObject,
  tax_identification: taxObject,
  representative: representativeWriteObject,
  country: Country,
  ...v1WriteFields,
};

export const CreateMerchantBody = Component(
  'CreateMerchantRequest',
  Type.Object(
    {
      customer_id: { ...Uuid, description: "The caller's customer (another is a 404 customer_not_found)" },
      country: merchantFields.country,
      legal_type: merchantFields.legal_type,
      business_name: merchantFields.business_name,
      fantasy_name: merchantFields.fantasy_name,
      additional_info: Type.Optional(AdditionalInfo),
      email: Type.Optional(merchantFields.email),
      merchant_code: Type.Optional(MerchantCode),
      address: Ref(MerchantAddress),
      tax_identification: Type.Optional(Ref(TaxIdentification)),
      tax: Type.Optional(v1WriteFields.tax),
      representative: Type.Optional(Ref(Representative)),
      phone: Type.Optional(v1WriteFields.phone),
      activity: Type.Optional(Activity),
      category: Type.Optional(Category),
      settlement_condition: Type.Optional(settlementObject),
      financial_info: Type.Optional(financialInfoObject),
    },
    {
      additionalProperties: false,
      description:
        "A new merchant of the caller's customer, in the platform's v2 shape (tax_identification) or v1 shape (tax): one of the two is required, and when both are sent they must agree",
      examples: [EXAMPLE_CREATE, EXAMPLE_CREATE_V1],
    },
  ),
);
export type CreateMerchantRequest = Static<typeof CreateMerchantBody>;

/** Fields a PATCH may clear with null: those a merchant may be created without. */
const clearable = <T extends TSchema>(schema: T, description: string) => Type.Optional(Nullable(schema, description));

export const UpdateMerchantBody = Component(
  'UpdateMerchantRequest',
  Type.Object(
    {
      legal_type: Type.Optional(LegalType),
      business_name: Type.Optional(merchantFields.business_name),
      fantasy_name: Type.Optional(merchantFields.fantasy_name),
      additional_info: clearable(AdditionalInfo, 'Free text for the customer; null clears it'),
      email: clearable(Email, "The merchant's contact e-mail; null clears it"),
      merchant_code: clearable(MerchantCode, 'Unique within the customer (409 merchant_code_conflict); null clears it'),
      status: Type.Optional(Status),
      address: Type.Optional(Ref(MerchantAddress)),
      tax_identification: Type.Optional(Ref(TaxIdentification)),
      tax: Type.Optional(v1WriteFields.tax),
      representative: clearable(representativeWriteObject, 'The whole representative, replaced; null removes it'),
      phone: clearable(v1WriteFields.phone, "The merchant's phone number; null clears it"),
      activity: clearable(Activity, 'What the merchant does; null clears it'),
      category: clearable(Category, "The merchant's category; null clears it"),
      settlement_condition: clearable(settlementObject, 'The settlement terms, replaced whole; null clears them'),
      financial_info: clearable(financialInfoObject, 'The financial information, replaced whole; null clears it'),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description:
        "The fields to change, in the platform's v1 or v2 shape (when both name one fact they must agree); address, tax_identification (or tax), representative, settlement_condition and financial_info are replaced whole. id, customer_id and country cannot be changed (400). The per-country lengths of the create apply.",
      examples: [
        {
          fantasy_name: 'Café 7 Centro',
          address: { ...EXAMPLE_ADDRESS, street: 'Calle 8', number: '900' },
          tax_identification: EXAMPLE_TAX,
          tax: { id: EXAMPLE_TAX.number, type: 'MONOTRIBUTO' },
          financial_info: { tax_condition: 'MONOTRIBUTO' },
          representative: { ...EXAMPLE_REPRESENTATIVE_BOTH, type: 'PROXY' },
          settlement_condition: EXAMPLE_SETTLEMENT,
          phone: '+54 221 555 0199',
          activity: 'Cafetería',
          category: '5814',
          email: null,
        },
      ],
    },
  ),
);
export type UpdateMerchantRequest = Static<typeof UpdateMerchantBody>;
