import { Type } from '@sinclair/typebox';
import { Component, InstantText, Timestamp, Uuid } from '../../schemas/common.js';
import { PaymentPlan } from './payment-plans-schemas.js';
import { PREVIEW_CHANGES_LIMIT } from './fee-rules-dal.js';
import { EffectiveAt } from './scheduled-changes-schemas.js';

export const MAX_PLANS_PER_ASSIGNMENT = 200;
export const MAX_MERCHANTS_PER_ASSIGNMENT = 10_000;

const PaymentPlanIds = Type.Array(Uuid, {
  minItems: 1,
  maxItems: MAX_PLANS_PER_ASSIGNMENT,
  description: `1..${MAX_PLANS_PER_ASSIGNMENT} ids (the id of payment plans); duplicates are ignored`,
});

export const BulkAssignBody = Component(
  'BulkAssignRequest',
  Type.Object(
    {
      merchant_ids: Type.Array(Uuid, {
        minItems: 1,
        maxItems: MAX_MERCHANTS_PER_ASSIGNMENT,
        description: `1..${MAX_MERCHANTS_PER_ASSIGNMENT} merchant ids; duplicates are ignored. Missing or empty is a 400 merchant_ids_required: use /v1/fee-rules/bulk-assign/all for every merchant.`,
      }),
      payment_plan_ids: PaymentPlanIds,
      effective_at: Type.Optional(EffectiveAt),
    },
    {
      additionalProperties: false,
      description: 'Which plans to assign to which merchants, now or at effective_at',
      examples: [
        {
          merchant_ids: ['b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e', 'c4a1e2f3-6b7d-4e8f-a9b0-1c2d3e4f5a6b'],
          payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'],
        },
      ],
    },
  ),
);

export const BulkAssignAllBody = Component(
  'BulkAssignAllRequest',
  Type.Object(
    { payment_plan_ids: PaymentPlanIds, effective_at: Type.Optional(EffectiveAt) },
    {
      additionalProperties: false,
      description:
        'merchant_ids is not sent here (400): every merchant of the customer (when the change runs) is a target.',
      examples: [
        { payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b', '1f7a2b3c-4d5e-4f6a-9b0c-1d2e3f4a5b6c'] },
      ],
    },
  ),
);

export const MerchantAssignBody = Component(
  'MerchantAssignRequest',
  Type.Object(
    { payment_plan_ids: PaymentPlanIds, effective_at: Type.Optional(EffectiveAt) },
    {
      additionalProperties: false,
      description: 'The plans to assign to the merchant of the path, now or at effective_at',
      examples: [{ payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'] }],
    },
  ),
);

/** 201 with an empty body: typed as undefined so that the handler sends nothing, not `null`. */
export const Created = Type.Unsafe<undefined>(Type.Null({ description: 'Assigned; no body' }));

/** Both assignment operations: `dry_run=true` answers what would change and writes nothing. */
export const AssignmentQuery = Type.Object(
  {
    dry_run: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: answer 200 with what the assignment would change, and change nothing (no audit record either). Same checks and errors as the real call.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const PLAN_A = '0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const PLAN_B = '1f7a2b3c-4d5e-4f6a-9b0c-1d2e3f4a5b6c';
const MERCHANT = 'b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e';

export const DryRun = Component(
  'BulkAssignDryRun',
  Type.Object(
    {
      dry_run: Type.Literal(true),
      merchants: Count('Target merchants'),
      merchants_changed: Count('Target merchants that would gain or lose a plan'),
      assignments_added: Count('Assignments that would be added, over all merchants'),
      assignments_removed: Count('Assignments that would be removed (replaced), over all merchants'),
      changes: Type.Array(
        Type.Object({
          merchant_id: Uuid,
          added: Type.Array(Uuid, { description: 'Plan ids the merchant would gain, sorted' }),
          removed: Type.Array(Uuid, { description: 'Plan ids the merchant would lose, sorted' }),
        }),
        {
          maxItems: PREVIEW_CHANGES_LIMIT,
          description: `The first ${PREVIEW_CHANGES_LIMIT} changed merchants by id; the counts cover all`,
        },
      ),
    },
    {
      description: 'What the assignment would change; nothing was written',
      examples: [
        {
          dry_run: true,
          merchants: 2,
          merchants_changed: 1,
          assignments_added: 1,
          assignments_removed: 1,
          changes: [{ merchant_id: MERCHANT, added: [PLAN_A], removed: [PLAN_B] }],
        },
      ],
    },
  ),
);

export const MerchantParams = Type.Object({ id: Uuid });

export const FeeRulesAtQuery = Type.Object(
  {
    at: Type.Optional(InstantText('The instant (e.g. 2026-03-01T12:00:00Z); default now. Read to the millisecond.')),
  },
  { additionalProperties: false },
);

const { is_selected: _selected, ...planProperties } = PaymentPlan.properties;

export const FeeRulesAt = Component(
  'MerchantFeeRulesAt',
  Type.Object(
    {
      merchant_id: Uuid,
      at: { ...Timestamp, description: 'The instant answered for' },
      data: Type.Array(
        Type.Object({
          ...planProperties,
          assigned_at: {
            ...Timestamp,
            description: 'Since when the merchant has held the plan (without interruption) at `at`',
          },
        }),
        {
          description:
            'The plans held at `at`, by card_brand, payment_method, is_international, has_installments, term',
        },
      ),
    },
    {
      description: 'The payment plans (fee rules) a merchant held at an instant',
      examples: [
        {
          merchant_id: MERCHANT,
          at: '2026-11-01T12:00:00.000Z',
          data: [
            {
              id: PLAN_A,
              payment_method: 'CREDIT',
              term: 1,
              commission: 2.99,
              card_brand: 'VISA',
              has_installments: false,
              is_international: false,
              assigned_at: '2026-10-15T09:30:00.000Z',
            },
          ],
        },
      ],
    },
  ),
);
