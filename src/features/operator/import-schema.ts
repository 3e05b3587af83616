/**
 * The operator's import document, built from the API's own schemas
 * (src/schemas/common.ts): ids are UUIDs in any letter case, lower-cased by the
 * validator; text refuses U+0000; an e-mail is one exactly as the API says.
 * Checked by the API's validator for JSON bodies (import-checks.ts), so the
 * command line accepts what the API accepts.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Email, Pattern, Text, Uuid } from '../../schemas/common.js';
import { merchantFields } from '../merchants/merchants-schemas.js';

const Code = Type.String({ pattern: Pattern('^[A-Z0-9_]{1,32}$', 'must be 1..32 upper-case letters, digits or _') });
const Name = Text({ minLength: 1, maxLength: 200 });
const strict = { additionalProperties: false } as const;

/** One entry per kind of record: a field added to a kind is added here only. */
const ImportCustomer = Type.Object({ id: Uuid, name: Name }, strict);

/**
 * A merchant: the API's fields (POST /v1/merchants), every one optional here.
 * `name` is needed only without fantasy_name and business_name, which make the
 * display name; tax_identification needs country in the same entry.
 */
const ImportMerchant = Type.Composite(
  [Type.Object({ id: Uuid, customer_id: Uuid, name: Type.Optional(Name) }), Type.Partial(Type.Object(merchantFields))],
  strict,
);

const ImportUser = Type.Object(
  {
    email: Email,
    type: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]),
    customer_id: Uuid,
    merchant_id: Type.Optional(Uuid),
    // Judged as the API judges a new password (assertStrongPassword) when the import sets it.
    password: Type.Optional(Text({ minLength: 1, maxLength: 1024 })),
    // A login user's role (docs/api.md, "Users and roles"); ADMIN when not given.
    role: Type.Optional(Type.Union([Type.Literal('ADMIN'), Type.Literal('MEMBER'), Type.Literal('VIEWER')])),
  },
  strict,
);

const ImportPaymentPlan = Type.Object(
  {
    id: Uuid,
    customer_id: Type.Optional(Uuid),
    payment_method: Code,
    card_brand: Code,
    term: Type.Integer({ minimum: 0, maximum: 999 }),
    // As POST /v1/fee-rules takes it: the column keeps 4 decimals, and a fifth would be rounded away unsaid.
    commission: Type.Number({ minimum: 0, maximum: 99_999_999.9999, multipleOf: 0.0001 }),
    has_installments: Type.Boolean(),
    is_international: Type.Boolean(),
  },
  strict,
);

const ImportAssignment = Type.Object(
  { merchant_id: Uuid, payment_plan_ids: Type.Array(Uuid, { minItems: 1 }) },
  strict,
);

export const ImportDocument = Type.Object(
  {
    customers: Type.Optional(Type.Array(ImportCustomer)),
    merchants: Type.Optional(Type.Array(ImportMerchant)),
    users: Type.Optional(Type.Array(ImportUser)),
    payment_plans: Type.Optional(Type.Array(ImportPaymentPlan)),
    assignments: Type.Optional(Type.Array(ImportAssignment)),
  },
  strict,
);

export type ImportDocument = Static<typeof ImportDocument>;
