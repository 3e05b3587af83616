/** The caller's customer as GET and PATCH /v1/customers/me show and change it: two-factor codes for all, four-eyes approval. */
import { type Static, Type } from '@sinclair/typebox';
import { Component, Uuid } from '../../schemas/common.js';
import { EXAMPLE_CUSTOMER } from './users-schemas.js';

const ApprovalPolicy = Type.Object(
  {
    fee_changes: Type.Optional(
      Type.Union([Type.Literal('NONE'), Type.Literal('REQUIRED')], {
        description:
          'REQUIRED: every fee change (assignments, scheduling or cancelling a scheduled change, creating or retiring a plan) becomes a change request that another ADMIN approves; NONE (default): they apply at once',
      }),
    ),
  },
  { additionalProperties: false, description: 'Four-eyes approval of fee changes (contract section 23)' },
);

export const CustomerSettings = Component(
  'Customer',
  Type.Object(
    {
      id: Uuid,
      name: Type.String(),
      require_mfa: Type.Boolean({ description: 'Every login needs a TOTP code' }),
      approval_policy: ApprovalPolicy,
    },
    {
      description: "The caller's customer",
      examples: [{ id: EXAMPLE_CUSTOMER, name: 'Acme', require_mfa: false, approval_policy: { fee_changes: 'NONE' } }],
    },
  ),
);

export const UpdateCustomerBody = Component(
  'UpdateCustomerRequest',
  Type.Object(
    { require_mfa: Type.Optional(Type.Boolean()), approval_policy: Type.Optional(ApprovalPolicy) },
    {
      additionalProperties: false,
      description: 'The settings to change; those left out stay',
      examples: [{ require_mfa: true }, { approval_policy: { fee_changes: 'REQUIRED' } }],
    },
  ),
);
export type UpdateCustomerRequest = Static<typeof UpdateCustomerBody>;
