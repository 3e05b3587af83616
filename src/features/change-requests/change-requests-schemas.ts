import { Type } from '@sinclair/typebox';
import {
  Component,
  Listing,
  Nullable,
  PageQuery,
  SAYING_TEXT_PATTERN,
  Text,
  Timestamp,
  Uuid,
} from '../../schemas/common.js';
import { CHANGE_REQUEST_STATUSES } from './change-requests-dal.js';

const Status = Type.Union(
  CHANGE_REQUEST_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      'PENDING until approved (APPLIED, or FAILED when it could no longer apply), REJECTED, CANCELLED or EXPIRED',
  },
);

const Person = Type.Object({
  type: Type.Union([Type.Literal('user'), Type.Literal('api_key')], {
    description: 'A login user (access token) or an API key',
  }),
  id: Type.String({ description: 'The user or the key' }),
  email: Nullable(Type.String(), "The login user's e-mail, or for a key that of the user it belongs to"),
});

const EXAMPLE_PREVIEW = {
  dry_run: true,
  merchants: 2,
  merchants_changed: 1,
  assignments_added: 1,
  assignments_removed: 0,
  changes: [
    {
      merchant_id: 'b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e',
      added: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'],
      removed: [],
    },
  ],
};

const EXAMPLE = {
  id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f',
  status: 'PENDING',
  operation: 'fee_rules.bulk_assign_all',
  request: {
    method: 'POST',
    path: '/v1/fee-rules/bulk-assign/all',
    body: { payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'] },
  },
  preview: EXAMPLE_PREVIEW,
  requested_by: { type: 'user', id: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d', email: 'maker@acme.example' },
  reviewed_by: null,
  reason: null,
  create_date: '2026-11-24T10:00:00.000Z',
  expires_at: '2026-12-01T10:00:00.000Z',
  decided_at: null,
  applied_at: null,
  result: null,
};

const changeRequestProperties = {
  id: Uuid,
  status: Status,
  operation: Type.String({
    description:
      'fee_rules.bulk_assign, fee_rules.bulk_assign_all, fee_rules.merchant_assign (each also with effective_at: scheduling), fee_rules.schedule_cancel, payment_plan.create or payment_plan.retire',
  }),
  request: Type.Object(
    { method: Type.String(), path: Type.String(), body: Type.Unknown({ description: 'The body as validated' }) },
    { description: 'The request as it was sent' },
  ),
  preview: Type.Unknown({ description: 'What the change would have done when it was asked for: its dry run' }),
  requested_by: Person,
  reviewed_by: Nullable(Person, 'Who approved or rejected it'),
  reason: Nullable(Type.String(), 'Why it was rejected, or why it failed to apply'),
  create_date: Timestamp,
  expires_at: { ...Timestamp, description: 'When a PENDING request expires: 7 days, or a scheduled change’s instant' },
  decided_at: Nullable(Timestamp, 'When it stopped being PENDING'),
  applied_at: Nullable(Timestamp, 'When its approval applied it (APPLIED only)'),
  result: Type.Unknown({ description: 'What applying it did (APPLIED only; null otherwise)' }),
};

export const ChangeRequest = Component(
  'ChangeRequest',
  Type.Object(changeRequestProperties, {
    description: 'A fee change held for the approval of another ADMIN (contract section 23)',
    examples: [EXAMPLE],
  }),
);

export const ChangeRequestDetail = Component(
  'ChangeRequestDetail',
  Type.Object(
    {
      ...changeRequestProperties,
      current_preview: Type.Unknown({
        description: 'What the change would do now: its dry run at this instant (PENDING only; null otherwise)',
      }),
      preview_hash: Nullable(
        Type.String(),
        'SHA-256 of current_preview: send it to approve exactly that (PENDING only)',
      ),
    },
    {
      description: 'A change request, with what it would do now',
      examples: [{ ...EXAMPLE, current_preview: EXAMPLE_PREVIEW, preview_hash: 'a'.repeat(64) }],
    },
  ),
);

export const ChangeRequestAccepted = Component(
  'ChangeRequestAccepted',
  Type.Object(
    { change_request: ChangeRequest },
    {
      description: "The customer's policy requires approval: the change was checked and is held, not applied",
      examples: [{ change_request: EXAMPLE }],
    },
  ),
);

export const ChangeRequestListing = Listing(ChangeRequest, 'ChangeRequestListing', {
  description: "A page of the customer's change requests, newest first",
  examples: [{ data: [EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

export const ChangeRequestListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional({ ...Status, description: 'Only requests with this status (default: all)' }) },
  { additionalProperties: false },
);

export const ChangeRequestParams = Type.Object({ id: Uuid });

export const ApproveBody = Component(
  'ApproveChangeRequestBody',
  Type.Object(
    {
      preview_hash: Type.Optional(
        Type.String({
          pattern: '^[0-9a-f]{64}$',
          description: 'The preview_hash you reviewed: the change applies only if it still does exactly that',
        }),
      ),
    },
    { additionalProperties: false, examples: [{ preview_hash: 'a'.repeat(64) }] },
  ),
);

export const RejectBody = Component(
  'RejectChangeRequestBody',
  Type.Object(
    {
      reason: Text({ pattern: SAYING_TEXT_PATTERN, minLength: 1, maxLength: 1000, description: 'Why it is rejected' }),
    },
    { additionalProperties: false, examples: [{ reason: 'Rates for MX are not approved yet' }] },
  ),
);
