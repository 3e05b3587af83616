import { Type } from '@sinclair/typebox';
import { Component, InstantText, Listing, Nullable, PageQuery, Timestamp, Uuid } from '../../schemas/common.js';
import { MAX_LEAD_DAYS, MIN_LEAD_SECONDS } from './scheduled-changes-service.js';

export const EffectiveAt = InstantText(
  `When the change takes effect, at least ${MIN_LEAD_SECONDS} seconds and at most ${MAX_LEAD_DAYS} days ahead, e.g. 2026-12-01T00:00:00-03:00. With it the call answers 202 with the scheduled change instead of assigning now`,
);

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const Status = Type.Union([Type.Literal('PENDING'), Type.Literal('APPLIED'), Type.Literal('CANCELLED')]);

const EXAMPLE = {
  id: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
  effective_at: '2026-12-01T03:00:00.000Z',
  kind: 'BULK',
  merchant_ids: ['b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e'],
  payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'],
  status: 'PENDING',
  create_date: '2026-11-24T10:00:00.000Z',
  applied_at: null,
  cancelled_at: null,
  outcome: null,
};

export const ScheduledChange = Component(
  'ScheduledChange',
  Type.Object(
    {
      id: Uuid,
      effective_at: { ...Timestamp, description: 'When it takes effect; its assignments carry this assigned_at' },
      kind: Type.Union([Type.Literal('BULK'), Type.Literal('ALL')], {
        description: 'BULK: the merchants named; ALL: every merchant of the customer when it applies',
      }),
      merchant_ids: Nullable(Type.Array(Uuid), 'The merchants named; null for ALL'),
      payment_plan_ids: Type.Array(Uuid),
      status: Status,
      create_date: Timestamp,
      applied_at: Nullable(Timestamp, 'When an instance applied it (APPLIED only)'),
      cancelled_at: Nullable(Timestamp, 'When it was cancelled (CANCELLED only)'),
      outcome: Nullable(
        Type.Object({
          merchants: Count('Target merchants when it applied'),
          merchants_changed: Count('Merchants that gained or lost a plan'),
          assignments_added: Count('Assignments added'),
          assignments_removed: Count('Assignments removed (replaced)'),
          skipped_payment_plan_ids: Type.Array(Uuid, {
            description: 'Plans retired since it was scheduled: not assigned',
          }),
          skipped_merchant_ids: Type.Array(Uuid, {
            description: 'Merchants named that could no longer be assigned to when it applied',
          }),
        }),
        'What applying it did (APPLIED only)',
      ),
    },
    { description: 'A change of fee rules scheduled for an instant', examples: [EXAMPLE] },
  ),
);

export const ScheduledChangeAccepted = Component(
  'ScheduledChangeAccepted',
  Type.Object(
    { scheduled_change: ScheduledChange },
    { description: 'The change was checked and scheduled', examples: [{ scheduled_change: EXAMPLE }] },
  ),
);

export const ScheduledChangeListing = Listing(ScheduledChange, 'ScheduledChangeListing', {
  description: "A page of the customer's scheduled changes, newest first",
  examples: [{ data: [EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

export const ScheduledChangeListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional({ ...Status, description: 'Only changes with this status (default: all)' }) },
  { additionalProperties: false },
);

export const ScheduledChangeParams = Type.Object({ id: Uuid });
