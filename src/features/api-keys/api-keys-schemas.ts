import { Type } from '@sinclair/typebox';
import { Email, Listing, Nullable, PageQuery, Timestamp, Uuid } from '../../schemas/common.js';

const UserTypeSchema = Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]);
const Status = Type.Union([Type.Literal('ENABLED'), Type.Literal('DELETED')]);

export const CreateApiKeyBody = Type.Object(
  {
    user: { ...Email, description: 'E-mail of the integration user the key is for' },
    customer_id: { ...Uuid, description: "The caller's customer" },
    merchant_id: Type.Optional({ ...Uuid, description: 'Sent when the key is for a merchant user' }),
  },
  { additionalProperties: false },
);

export const CreatedApiKey = Type.Object({
  id: Uuid,
  api_key: Type.String({ description: 'The full key. Shown only in this response.' }),
  user: Type.String(),
  user_type: UserTypeSchema,
  customer_id: Uuid,
  merchant_id: Type.Optional({ ...Uuid, description: 'Only on MERCHANT keys' }),
  status: Status,
  create_date: Timestamp,
});

export const ListedApiKey = Type.Object({
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
});

export const ListApiKeysQuery = Type.Object(
  {
    ...PageQuery,
    username: Type.Optional(Type.String({ maxLength: 254, description: 'Filter by the e-mail of the key user' })),
    status: Type.String({
      default: 'ENABLED',
      pattern: '^([Ee][Nn][Aa][Bb][Ll][Ee][Dd]|[Dd][Ee][Ll][Ee][Tt][Ee][Dd])$',
      description: 'ENABLED (default) or DELETED, case-insensitive',
    }),
    merchant_id: Type.Optional({ ...Uuid, description: "Customer callers: list this merchant's keys instead" }),
  },
  { additionalProperties: false },
);

export const ApiKeyListing = Listing(ListedApiKey);

export const ApiKeyParams = Type.Object({ id: Uuid });
