import { Type } from '@sinclair/typebox';
import { Nullable, Uuid } from '../../schemas/common.js';

export const LoginBody = Type.Object(
  {
    user: Type.String({ minLength: 1, maxLength: 254, description: 'User name (e-mail) of a CUSTOMER user' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const RefreshBody = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);

export const TokenResponse = Type.Object({
  token: Type.Object({
    access_token: Type.String({ description: 'Opaque bearer token' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
    refresh_token: Type.String({ description: 'Single-use token for POST /v1/login/refresh' }),
    refresh_expires_in: Type.Integer({ description: 'Seconds until the refresh token expires' }),
  }),
});

export const CurrentUser = Type.Object({
  id: Uuid,
  user: Type.String({ description: 'E-mail of the user' }),
  user_type: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]),
  customer_id: Uuid,
  merchant_id: Nullable(Uuid, 'null for customer users'),
  auth: Type.Union([Type.Literal('token'), Type.Literal('api_key')], { description: 'How this request was authenticated' }),
});
