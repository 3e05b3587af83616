/** A merchant as answers show it, alone and in pages, and the listing's query (the fields it is made of: merchants-schemas.ts). */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  Component,
  Nullable,
  pageDescriptor,
  PageQuery,
  Pattern,
  Ref,
  Text,
  Timestamp,
  Uuid,
} from '../../schemas/common.js';
import {
  EXAMPLE_FINANCIAL_INFO,
  EXAMPLE_SETTLEMENT,
  financialInfoObject,
  settlementObject,
  taxAnswerObject,
} from './merchant-v1-schemas.js';
import {
  Country,
  LegalType,
  Status,
  EXAMPLE_ADDRESS,
  EXAMPLE_TAX,
  EXAMPLE_REPRESENTATIVE_BOTH,
  addressObject,
  taxObject,
  representativeAnswerObject,
  EXAMPLE_CREATE,
} from './merchants-schemas.js';

export const MerchantParams = Type.Object({ id: { ...Uuid, examples: ['b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e'] } });

/** The platform's documented maximum of its merchant listing (contract section 20); other listings serve 1,000. */
export const MAX_MERCHANT_PAGE_SIZE = 10_000;

export const MerchantListQuery = Type.Object(
  {
    ...PageQuery,
    size: Type.Integer({
      minimum: 1,
      default: 10,
      'x-clamp-maximum': MAX_MERCHANT_PAGE_SIZE,
      description: `Results per page: an integer of at least 1. A size above ${MAX_MERCHANT_PAGE_SIZE} is not refused: it is served as ${MAX_MERCHANT_PAGE_SIZE}, and page.size of the answer tells the size used`,
    }),
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
  tax: { id: EXAMPLE_TAX.number, type: 'RESPONSABLE_INSCRIPTO' },
  representative: EXAMPLE_REPRESENTATIVE_BOTH,
  additional_info: 'Open weekends',
  phone: '+54 221 555 0199',
  activity: 'Cafetería',
  category: '5814',
  settlement_condition: EXAMPLE_SETTLEMENT,
  financial_info: EXAMPLE_FINANCIAL_INFO,
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
      tax: nullable(taxAnswerObject, `v1's tax: id is tax_identification.number${forMerchantsBefore}`),
      representative: nullable(representativeAnswerObject, 'The representative, or null'),
      additional_info: nullable(Type.String(), 'Free text, or null'),
      phone: nullable(Type.String(), "The merchant's phone number, or null"),
      activity: nullable(Type.String(), 'What the merchant does, or null'),
      category: nullable(Type.String(), "The merchant's category, or null"),
      settlement_condition: nullable(settlementObject, 'The settlement terms (the CBU or CVU compact), or null'),
      financial_info: nullable(financialInfoObject, 'The financial information, or null'),
      create_date: Timestamp,
      update_date: Timestamp,
    },
    {
      description:
        "A merchant of a customer: feegate's fields and both generations of the platform's record, kept consistent",
      examples: [EXAMPLE],
    },
  ),
);
export type MerchantResource = Static<typeof Merchant>;

const MerchantPage = pageDescriptor('MerchantPage', MAX_MERCHANT_PAGE_SIZE, 'Where the page sits in the whole listing');

/** The platform's listing shape (HAL's `_embedded`), which its clients read: no `data`. */
export const MerchantListing = Component(
  'MerchantListing',
  Type.Object(
    {
      _embedded: Type.Object(
        { merchants: Type.Array(Ref(Merchant)) },
        { description: "The page's merchants, newest first" },
      ),
      page: Ref(MerchantPage),
    },
    {
      description: "A page of merchants, newest first, in the platform's shape",
      examples: [
        { _embedded: { merchants: [EXAMPLE] }, page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } },
      ],
    },
  ),
);
