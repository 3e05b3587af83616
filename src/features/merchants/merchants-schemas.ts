import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  Component,
  Email,
  Listing,
  Nullable,
  PageQuery,
  Pattern,
  Ref,
  Text,
  Timestamp,
  Uuid,
} from '../../schemas/common.js';

/** A string of one of `values`: a plain enum, so that it can also be nullable. */
function Enum<const T extends readonly string[]>(values: T, description: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}

export const COUNTRIES = ['ARG', 'MEX'] as const;
export const LEGAL_TYPES = ['NATURAL_PERSON', 'LEGAL_ENTITY'] as const;
export const MERCHANT_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type Country = (typeof COUNTRIES)[number];
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

const Country = Enum(COUNTRIES, 'ISO 3166-1 alpha-3: ARG (Argentina) or MEX (Mexico)');
const LegalType = Enum(LEGAL_TYPES, 'NATURAL_PERSON (a person trading in their own name) or LEGAL_ENTITY (a company)');
const Status = Enum(MERCHANT_STATUSES, 'ACTIVE, or INACTIVE: its keys are refused and it gets no new payment plans');

const Name = (description: string, example: string) =>
  Text({ minLength: 1, maxLength: 200, description, examples: [example] });
const Short = (maxLength: number, description: string, example: string) =>
  Text({ minLength: 1, maxLength, description, examples: [example] });

const EXAMPLE_ADDRESS = {
  state: 'Buenos Aires',
  city: 'La Plata',
  zip: 'B1900',
  street: 'Calle 7',
  number: '1234',
  floor: '2',
  apartment: 'B',
};
const EXAMPLE_TAX = { type: 'CUIT', number: '30712345671' } as const;
const EXAMPLE_REPRESENTATIVE = {
  type: 'PRESIDENT',
  name: 'Ana',
  surname: 'García',
  identification: { type: 'DNI', number: '26756539' },
  email: 'ana.garcia@example.com',
  phone: '+54 221 555 0100',
} as const;

const addressFields = {
  state: Short(100, 'State or province', 'Buenos Aires'),
  city: Short(100, 'City', 'La Plata'),
  zip: Short(16, 'Postal code', 'B1900'),
  street: Short(200, 'Street', 'Calle 7'),
  number: Short(16, 'Street number', '1234'),
  floor: Type.Optional(Short(16, 'Floor', '2')),
  apartment: Type.Optional(Short(16, 'Apartment', 'B')),
};
const addressObject = Type.Object(addressFields, {
  additionalProperties: false,
  description: "The merchant's address",
  examples: [EXAMPLE_ADDRESS],
});
export const MerchantAddress = Component('MerchantAddress', addressObject);

/**
 * The number's shape only: whether it is a valid CUIT or RFC, and fits the
 * merchant's country, is checked by the service (tax-identification.ts), whose
 * refusal is a 400 `invalid_tax_identification` naming `tax_identification.number`.
 */
const TAX_NUMBER_PATTERN = Pattern(
  '^[0-9A-Za-z&Ññ][0-9A-Za-z&Ññ .-]{9,19}$',
  'must be a CUIT (11 digits, dashes allowed) or an RFC (12 or 13 letters and digits)',
);
const taxObject = Type.Object(
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

const representativeObject = Type.Object(
  {
    type: Enum(['PRESIDENT', 'PROXY', 'OTHER'] as const, 'What the person is to the merchant'),
    name: Short(100, 'Given name', 'Ana'),
    surname: Short(100, 'Surname', 'García'),
    identification: Type.Object(
      {
        type: Short(32, 'Kind of document, e.g. DNI, CURP, PASSPORT', 'DNI'),
        number: Short(32, 'Document number', '26756539'),
      },
      { additionalProperties: false, description: "The representative's identity document" },
    ),
    email: Email,
    phone: Type.String({
      minLength: 4,
      maxLength: 32,
      pattern: Pattern(
        '^\\+?[0-9][0-9 ()./-]*$',
        'must be a phone number: digits, an optional leading +, spaces, ()./-',
      ),
      description: 'Phone number, international form recommended',
      examples: [EXAMPLE_REPRESENTATIVE.phone],
    }),
  },
  {
    additionalProperties: false,
    description: 'The person who represents the merchant',
    examples: [EXAMPLE_REPRESENTATIVE],
  },
);
export const Representative = Component('MerchantRepresentative', representativeObject);

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

const EXAMPLE_CREATE = {
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
  representative: EXAMPLE_REPRESENTATIVE,
};

/** The fields of a merchant a customer sends, shared by the create body and the operator's import. */
export const merchantFields = {
  legal_type: LegalType,
  business_name: Name('Registered (legal) name', 'Cafetería La Plata S.A.'),
  fantasy_name: Name("Trading name, shown as the merchant's name", 'Café 7'),
  additional_info: AdditionalInfo,
  email: { ...Email, description: "The merchant's contact e-mail" },
  merchant_code: MerchantCode,
  address: addressObject,
  tax_identification: taxObject,
  representative: representativeObject,
  country: Country,
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
      tax_identification: Ref(TaxIdentification),
      representative: Type.Optional(Ref(Representative)),
    },
    { additionalProperties: false, description: "A new merchant of the caller's customer", examples: [EXAMPLE_CREATE] },
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
      representative: clearable(representativeObject, 'The whole representative, replaced; null removes it'),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description:
        'The fields to change; address, tax_identification and representative are replaced whole. id, customer_id and country cannot be changed (400).',
      examples: [
        {
          fantasy_name: 'Café 7 Centro',
          address: { ...EXAMPLE_ADDRESS, street: 'Calle 8', number: '900' },
          tax_identification: EXAMPLE_TAX,
          representative: { ...EXAMPLE_REPRESENTATIVE, type: 'PROXY' },
          email: null,
        },
      ],
    },
  ),
);
export type UpdateMerchantRequest = Static<typeof UpdateMerchantBody>;

export const MerchantParams = Type.Object({ id: { ...Uuid, examples: ['b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e'] } });

export const MerchantListQuery = Type.Object(
  {
    ...PageQuery,
    q: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 100,
        description: 'Only merchants whose name contains this text (any letter case), or whose id starts with it',
        examples: ['coffee'],
      }),
    ),
    status: Type.Optional(
      Type.String({
        pattern: Pattern(
          '^([Aa][Cc][Tt][Ii][Vv][Ee]|[Ii][Nn][Aa][Cc][Tt][Ii][Vv][Ee])$',
          'must be ACTIVE or INACTIVE (any letter case)',
        ),
        description: 'Only merchants in this status, ACTIVE or INACTIVE, case-insensitive; default both',
        examples: ['ACTIVE'],
      }),
    ),
  },
  { additionalProperties: false },
);

const EXAMPLE = {
  id: 'b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e',
  customer_id: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  name: 'Café 7',
  business_name: EXAMPLE_CREATE.business_name,
  fantasy_name: EXAMPLE_CREATE.fantasy_name,
  legal_type: 'LEGAL_ENTITY',
  country: 'ARG',
  merchant_code: 'LP-0001',
  email: EXAMPLE_CREATE.email,
  status: 'ACTIVE',
  address: EXAMPLE_ADDRESS,
  tax_identification: EXAMPLE_TAX,
  representative: EXAMPLE_REPRESENTATIVE,
  additional_info: 'Open weekends',
  create_date: '2026-10-02T14:05:00.000Z',
  update_date: '2026-10-02T14:05:00.000Z',
};

const nullable = (schema: TSchema, description: string) => Nullable(schema, description);
const forMerchantsBefore = ' (null for merchants made before onboarding through the API)';

export const Merchant = Component(
  'Merchant',
  Type.Object(
    {
      id: Uuid,
      customer_id: Uuid,
      name: Type.String({ description: 'The display name: fantasy_name, else business_name' }),
      business_name: nullable(Type.String(), `Registered (legal) name${forMerchantsBefore}`),
      fantasy_name: nullable(Type.String(), `Trading name${forMerchantsBefore}`),
      legal_type: nullable(LegalType, `NATURAL_PERSON or LEGAL_ENTITY${forMerchantsBefore}`),
      country: nullable(Country, `ARG or MEX${forMerchantsBefore}`),
      merchant_code: nullable(Type.String(), "The customer's own code for the merchant, or null"),
      email: nullable(Type.String(), 'Contact e-mail, or null'),
      status: Status,
      address: nullable(addressObject, `The address${forMerchantsBefore}`),
      tax_identification: nullable(taxObject, `CUIT or RFC, compact${forMerchantsBefore}`),
      representative: nullable(representativeObject, 'The representative, or null'),
      additional_info: nullable(Type.String(), 'Free text, or null'),
      create_date: Timestamp,
      update_date: Timestamp,
    },
    { description: 'A merchant of a customer', examples: [EXAMPLE] },
  ),
);
export type MerchantResource = Static<typeof Merchant>;

export const MerchantListing = Listing(Merchant, 'MerchantListing', {
  description: 'A page of merchants, newest first',
  examples: [{ data: [EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});
