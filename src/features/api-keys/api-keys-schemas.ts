import { Type } from '@sinclair/typebox';
import {
  Component,
  Email,
  Listing,
  Nullable,
  PageQuery,
  Pattern,
  Text,
  Timestamp,
  Uuid,
} from '../../schemas/common.js';
import {
  Access,
  AllowedIps,
  ExpiresAt,
  LIFECYCLE_EXAMPLE,
  lifecycleFields,
  Name,
  Permissions,
  RateLimit,
} from './key-settings-schemas.js';

const UserTypeSchema = Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]);
const Status = Type.Union([Type.Literal('ENABLED'), Type.Literal('DELETED'), Type.Literal('EXPIRED')], {
  description: 'EXPIRED: an ENABLED key whose expires_at has passed',
});

export const MAX_GRACE_PERIOD_SECONDS = 604_800;

/** Who created the key, so that disabling a user can revoke what it made. */
const CreatedBy = Nullable(
  Type.Object({
    type: Type.Union([Type.Literal('user'), Type.Literal('api_key'), Type.Literal('operator')], {
      description: 'user: a login user; api_key: an API key; operator: the command line',
    }),
    id: Nullable(Uuid, "The login user's or the API key's id; null for the operator"),
    email: Nullable(Type.String(), "The login user's e-mail, or that of the API key's user; null for the operator"),
  }),
  'null for keys created before creators were recorded',
);
const CREATED_BY_EXAMPLE = {
  type: 'user',
  id: '8e7d6c5b-4a3b-4c2d-9e1f-0a1b2c3d4e5f',
  email: 'ana@acme.example',
};

const CUSTOMER_ID = '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const MERCHANT_ID = 'b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e';
const KEY_ID = '3f0c2a8e-5b1d-4c6e-9a7f-2d8b4e6c1a90';

export const CreateApiKeyBody = Component(
  'CreateApiKeyRequest',
  Type.Object(
    {
      user: { ...Email, description: 'E-mail of the integration user the key is for' },
      customer_id: { ...Uuid, description: "The caller's customer" },
      merchant_id: Type.Optional({ ...Uuid, description: 'Sent when the key is for a merchant user' }),
      name: Type.Optional(Name),
      expires_at: Type.Optional(ExpiresAt),
      access: Type.Optional({ ...Access, description: 'full (default) or read_only (GET operations only)' }),
      rate_limit: Type.Optional(RateLimit),
      permissions: Type.Optional({
        ...Permissions,
        description: `${Permissions.description} Omitted: what the calling key has (within access), or for a login every permission access allows (full: all; read_only: every :read).`,
      }),
      allowed_ips: Type.Optional({
        ...AllowedIps,
        description: `${AllowedIps.description} Omitted: the calling key's, or none for a login.`,
      }),
      user_type: Type.Optional({
        ...UserTypeSchema,
        description: "The platform's: when sent, MERCHANT with merchant_id and CUSTOMER without (else 400)",
      }),
    },
    {
      additionalProperties: false,
      description: 'Who the key is for: a CUSTOMER key without merchant_id, a MERCHANT key with it',
      examples: [
        {
          user: 'pos-terminal@acme.example',
          customer_id: CUSTOMER_ID,
          merchant_id: MERCHANT_ID,
          ...LIFECYCLE_EXAMPLE,
        },
      ],
    },
  ),
);

export const CreatedApiKey = Component(
  'CreatedApiKey',
  Type.Object(
    {
      id: Uuid,
      api_key: Type.String({ description: 'The full key. Shown only in this response.' }),
      user: Type.String(),
      user_type: UserTypeSchema,
      customer_id: Uuid,
      merchant_id: Type.Optional({ ...Uuid, description: 'Only on MERCHANT keys' }),
      status: Status,
      create_date: Timestamp,
      update_date: { ...Timestamp, description: 'When the key last changed: create_date, for a new key' },
      ...lifecycleFields,
      created_by: CreatedBy,
    },
    {
      description: 'A new API key, with the full key shown this once',
      examples: [
        {
          id: KEY_ID,
          api_key: 'fgk_22WY3G1n6Bmo56ATzpJZx6SHFfC2JU7W1sHFV4',
          user: 'pos-terminal@acme.example',
          user_type: 'MERCHANT',
          customer_id: CUSTOMER_ID,
          merchant_id: MERCHANT_ID,
          status: 'ENABLED',
          create_date: '2026-11-23T07:30:00.000Z',
          update_date: '2026-11-23T07:30:00.000Z',
          ...LIFECYCLE_EXAMPLE,
          created_by: CREATED_BY_EXAMPLE,
        },
      ],
    },
  ),
);

/** The platform SDK's merchant key request (POST /auth/users). */
export const SdkMerchantKeyBody = Component(
  'SdkMerchantKeyRequest',
  Type.Object(
    {
      user: { ...Email, description: 'E-mail of the merchant user the key is for' },
      user_type: Type.Literal('MERCHANT', { description: 'Always MERCHANT: this path makes merchant keys' }),
      customer_id: { ...Uuid, description: "The caller's customer" },
      merchant_id: { ...Uuid, description: 'A merchant of customer_id' },
    },
    {
      additionalProperties: false,
      description: "The platform SDK's request for a merchant key",
      examples: [
        {
          user: 'pos-terminal@acme.example',
          user_type: 'MERCHANT',
          customer_id: CUSTOMER_ID,
          merchant_id: MERCHANT_ID,
        },
      ],
    },
  ),
);

/** The platform SDK's answer: the new key in the platform's fields only. */
export const SdkCreatedKey = Component(
  'SdkCreatedKey',
  Type.Object(
    {
      id: Uuid,
      api_key: Type.String({ description: 'The full key. Shown only in this response.' }),
      user: Type.String(),
      user_type: UserTypeSchema,
      merchant_id: Uuid,
      customer_id: Uuid,
      create_date: Timestamp,
      update_date: Timestamp,
    },
    {
      description: "A new merchant key as the platform's SDK reads it",
      examples: [
        {
          id: KEY_ID,
          api_key: 'fgk_22WY3G1n6Bmo56ATzpJZx6SHFfC2JU7W1sHFV4',
          user: 'pos-terminal@acme.example',
          user_type: 'MERCHANT',
          merchant_id: MERCHANT_ID,
          customer_id: CUSTOMER_ID,
          create_date: '2026-11-23T07:30:00.000Z',
          update_date: '2026-11-23T07:30:00.000Z',
        },
      ],
    },
  ),
);

const LISTED_EXAMPLE = {
  id: KEY_ID,
  api_key: 'fgk_****HFV4',
  user: 'pos-terminal@acme.example',
  user_type: 'MERCHANT',
  customer_id: [CUSTOMER_ID],
  merchant_id: [MERCHANT_ID],
  status: 'ENABLED',
  create_date: '2026-11-23T07:30:00.000Z',
  update_date: '2026-11-23T07:30:00.000Z',
  last_used_at: '2026-11-23T08:02:11.412Z',
  ...LIFECYCLE_EXAMPLE,
  created_by: CREATED_BY_EXAMPLE,
};

export const ListedApiKey = Component(
  'ApiKey',
  Type.Object(
    {
      id: Uuid,
      api_key: Type.String({ description: 'Masked: the prefix and the last 4 characters only' }),
      user: Type.String(),
      user_type: UserTypeSchema,
      customer_id: Type.Array(Uuid),
      merchant_id: Type.Optional(Type.Array(Uuid, { description: 'Only on MERCHANT keys' })),
      status: Status,
      create_date: Timestamp,
      update_date: Timestamp,
      last_used_at: Nullable(Timestamp, 'null until first use; shows a use within 5 s'),
      ...lifecycleFields,
      created_by: CreatedBy,
    },
    { description: 'An API key as listed: masked', examples: [LISTED_EXAMPLE] },
  ),
);

export const ListApiKeysQuery = Type.Object(
  {
    ...PageQuery,
    username: Type.Optional(Text({ maxLength: 254, description: 'Filter by the e-mail of the key user' })),
    status: Type.String({
      default: 'ENABLED',
      pattern: Pattern(
        '^([Ee][Nn][Aa][Bb][Ll][Ee][Dd]|[Dd][Ee][Ll][Ee][Tt][Ee][Dd]|[Ee][Xx][Pp][Ii][Rr][Ee][Dd])$',
        'must be ENABLED, DELETED or EXPIRED (any letter case)',
      ),
      description: 'ENABLED (default), DELETED or EXPIRED, case-insensitive',
    }),
    merchant_id: Type.Optional({ ...Uuid, description: "Customer callers: list this merchant's keys instead" }),
  },
  { additionalProperties: false },
);

export const UpdateApiKeyBody = Component(
  'UpdateApiKeyRequest',
  Type.Object(
    {
      name: Type.Optional(Nullable(Name, 'null removes the name')),
      expires_at: Type.Optional(Nullable(ExpiresAt, 'null removes the expiry')),
      rate_limit: Type.Optional(Nullable(RateLimit, 'null removes the rate limit')),
      permissions: Type.Optional({
        ...Permissions,
        description: `${Permissions.description} Replaces the key's; a key changing itself may only drop some.`,
      }),
      allowed_ips: Type.Optional({
        ...AllowedIps,
        description: `${AllowedIps.description} Replaces the key's; a key changing itself may only narrow them.`,
      }),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description: 'What to change: any of name, expires_at, rate_limit, permissions and allowed_ips',
      examples: [
        {
          name: 'POS terminals, store 12',
          expires_at: '2027-05-23T00:00:00.000Z',
          rate_limit: { limit: 300, window_seconds: 60 },
          permissions: ['merchants:read', 'fee_rules:read'],
          allowed_ips: ['203.0.113.0/24'],
        },
      ],
    },
  ),
);

export const RollApiKeyBody = Component(
  'RollApiKeyRequest',
  Type.Object(
    {
      grace_period_seconds: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: MAX_GRACE_PERIOD_SECONDS,
          description: 'How long the old key keeps working (0..604800, default 0: refused at once)',
        }),
      ),
    },
    {
      additionalProperties: false,
      description: 'How long the old key keeps working',
      examples: [{ grace_period_seconds: 86400 }],
    },
  ),
);

export const ApiKeyListing = Listing(ListedApiKey, 'ApiKeyListing', {
  description: 'A page of API keys, newest first',
  examples: [{ data: [LISTED_EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

export const ApiKeyParams = Type.Object({ id: Uuid });
