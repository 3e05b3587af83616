import { Type } from '@sinclair/typebox';
import { Component, InstantText, Listing, Nullable, PageQuery, Text, Timestamp } from '../../schemas/common.js';

export const AUDIT_EXAMPLE = {
  id: '1042',
  action: 'fee_rules.bulk_assign',
  actor: { type: 'user', id: '5d1c7e2a-8b3f-4a6d-9e0c-2f4b6a8d0c1e', user: 'ops@acme.example' },
  request_id: '7f3e9a2c-1b4d-4e6f-8a0b-3c5d7e9f1a2b',
  target: { type: 'merchants', id: null },
  details: { payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b'], merchant_count: 2, added: 2, removed: 1 },
  create_date: '2026-11-23T07:30:00.000Z',
};

export const AuditEventListQuery = Type.Object(
  {
    ...PageQuery,
    action: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 64,
        description: 'Only records of this action, e.g. fee_rules.bulk_assign_all, api_key.created',
      }),
    ),
    from: Type.Optional(InstantText('Only records at or after this instant')),
    to: Type.Optional(InstantText('Only records before this instant')),
  },
  { additionalProperties: false },
);

export const AuditExportQuery = Type.Object(
  {
    from: { ...InstantText('The first instant of the range (inclusive)'), examples: ['2026-11-01T00:00:00Z'] },
    to: {
      ...InstantText('The end of the range (exclusive); at most 366 days after from'),
      examples: ['2026-12-01T00:00:00Z'],
    },
    format: Type.Optional(
      Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], {
        description: 'ndjson (the default): one AuditEvent per line; csv: RFC 4180 with a header line',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AuditEvent = Component(
  'AuditEvent',
  Type.Object(
    {
      id: Type.String({ description: 'Opaque; later records have greater ids' }),
      action: Type.String({
        description: 'What happened, e.g. fee_rules.bulk_assign, api_key.created, api_key.deleted, auth.logout',
      }),
      actor: Type.Object({
        type: Type.String({
          description:
            'user (a token), api_key, operator (command line), anonymous (a failed login) or system (the service itself, e.g. webhook.disabled)',
        }),
        id: Nullable(Type.String(), 'The user id or API key id; null for the operator'),
        user: Nullable(
          Type.String(),
          'E-mail of the user who acted, directly or through its API key; null for the operator',
        ),
      }),
      request_id: Nullable(
        Type.String(),
        'The X-Request-Id of the request that made the change; null for the command line',
      ),
      target: Type.Object(
        { type: Type.String(), id: Nullable(Type.String()) },
        { description: 'What the change was made to' },
      ),
      details: Type.Object({}, { additionalProperties: true, description: 'Depends on the action' }),
      create_date: Timestamp,
    },
    { description: 'One change, recorded in the transaction that made it', examples: [AUDIT_EXAMPLE] },
  ),
);

export const AuditEventListing = Listing(AuditEvent, 'AuditEventListing', {
  description: 'A page of audit events, newest first',
  examples: [{ data: [AUDIT_EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

export const AuditExportCsv = Component(
  'AuditExportCsv',
  Type.String({
    description:
      'RFC 4180 CSV: a header line, then one line per record (CRLF); columns id, create_date, action, actor_type, actor_id, actor_user, request_id, target_type, target_id, details (the JSON object as text)',
  }),
);
