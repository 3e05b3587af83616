import { Type } from '@sinclair/typebox';
import { Uuid } from '../../schemas/common.js';

export const MAX_PLANS_PER_ASSIGNMENT = 200;
export const MAX_MERCHANTS_PER_ASSIGNMENT = 10_000;

const PaymentPlanIds = Type.Array(Uuid, {
  minItems: 1,
  maxItems: MAX_PLANS_PER_ASSIGNMENT,
  description: `1..${MAX_PLANS_PER_ASSIGNMENT} ids (the id of payment plans); duplicates are ignored`,
});

export const BulkAssignBody = Type.Object(
  {
    merchant_ids: Type.Optional(
      Type.Array(Uuid, {
        maxItems: MAX_MERCHANTS_PER_ASSIGNMENT,
        description: `1..${MAX_MERCHANTS_PER_ASSIGNMENT} merchant ids; duplicates are ignored. Missing or empty is a 400 merchant_ids_required: use /v1/fee-rules/bulk-assign/all for every merchant.`,
      }),
    ),
    payment_plan_ids: PaymentPlanIds,
  },
  { additionalProperties: false },
);

export const BulkAssignAllBody = Type.Object(
  { payment_plan_ids: PaymentPlanIds },
  { additionalProperties: false, description: 'merchant_ids is not sent here (400): every merchant of the customer is a target.' },
);

/** 201 with an empty body: typed as undefined so that the handler sends nothing, not `null`. */
export const Created = Type.Unsafe<undefined>(Type.Null({ description: 'Assigned; no body' }));
