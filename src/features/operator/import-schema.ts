/** The operator's import document (contract section 7). */
import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Code = Type.String({ pattern: '^[A-Z0-9_]{1,32}$' });

export const ImportDocument = Type.Object(
  {
    customers: Type.Optional(Type.Array(Type.Object({ id: Uuid, name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }))),
    merchants: Type.Optional(
      Type.Array(Type.Object({ id: Uuid, customer_id: Uuid, name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })),
    ),
    users: Type.Optional(
      Type.Array(
        Type.Object(
          {
            email: Type.String({ format: 'email', maxLength: 254 }),
            type: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]),
            customer_id: Uuid,
            merchant_id: Type.Optional(Uuid),
            password: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    payment_plans: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Uuid,
            customer_id: Type.Optional(Uuid),
            payment_method: Code,
            card_brand: Code,
            term: Type.Integer({ minimum: 0, maximum: 1000 }),
            commission: Type.Number({ minimum: 0, maximum: 99_999_999 }),
            has_installments: Type.Boolean(),
            is_international: Type.Boolean(),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    assignments: Type.Optional(
      Type.Array(
        Type.Object({ merchant_id: Uuid, payment_plan_ids: Type.Array(Uuid, { minItems: 1 }) }, { additionalProperties: false }),
      ),
    ),
  },
  { additionalProperties: false },
);

export type ImportDocument = Static<typeof ImportDocument>;
