import { Type } from '@sinclair/typebox';
import { Component, Nullable, Text, Uuid } from '../../schemas/common.js';

const ChallengeName = Type.Union(
  [Type.Literal('NEW_PASSWORD_REQUIRED'), Type.Literal('SOFTWARE_TOKEN_MFA'), Type.Literal('MFA_SETUP')],
  { description: "The step the login still needs (Cognito's names)" },
);
const EXAMPLE_CHALLENGE_SESSION = 'fgc_pV7s0Qm4Rk9tXw2zB8nC3dF6gH1jK5lM0oP4qR7sT9u';

export const ChallengeRequest = Component(
  'ChallengeRequest',
  Type.Object(
    {
      name: ChallengeName,
      session: Text({ minLength: 1, maxLength: 256, description: 'The session of the challenge, good once' }),
      new_password: Type.Optional(
        Text({
          minLength: 1,
          maxLength: 1024,
          description: 'NEW_PASSWORD_REQUIRED: the new password (12..256 characters)',
        }),
      ),
      code: Type.Optional(
        Text({
          minLength: 1,
          maxLength: 64,
          description: 'SOFTWARE_TOKEN_MFA and MFA_SETUP: the 6-digit TOTP code, or a recovery code in its place',
        }),
      ),
    },
    {
      additionalProperties: false,
      description: 'The answer to a login challenge',
      examples: [{ name: 'SOFTWARE_TOKEN_MFA', session: EXAMPLE_CHALLENGE_SESSION, code: '123456' }],
    },
  ),
);

export const LoginBody = Component(
  'LoginRequest',
  Type.Object(
    {
      user: Text({ minLength: 1, maxLength: 254, description: 'User name (e-mail) of a CUSTOMER user' }),
      password: Text({ minLength: 1, maxLength: 1024 }),
    },
    {
      additionalProperties: false,
      description: 'The credentials of a CUSTOMER user',
      examples: [{ user: 'admin@acme.example', password: 'correct horse battery staple' }],
    },
  ),
);

export const RefreshBody = Component(
  'RefreshRequest',
  Type.Object(
    // Long enough for an access token sent here by mistake: that is a 401, not a 400.
    { refresh_token: Text({ minLength: 1, maxLength: 2048 }) },
    {
      additionalProperties: false,
      description: 'A refresh token, good once',
      examples: [{ refresh_token: 'fgr_Vq3xN8p2Lk7sT0aB4cD9eF1gH6iJ5kL2mN3oP4qR5sT' }],
    },
  ),
);

/** A real token signed by the example key of JsonWebKeySet below. */
const EXAMPLE_ACCESS_TOKEN =
  'eyJhbGciOiJFZERTQSIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImZZUHgzRXMydVJzbnFpa3RHQ0dRREpWaUlpODFkU3VNVEFVXzRFemw4N2MifQ.eyJ1c2VyX3R5cGUiOiJDVVNUT01FUiIsImN1c3RvbWVyX2lkIjoiNmExZjJjM2QtNGU1Zi00YTZiLThjN2QtOWUwZjFhMmIzYzRkIiwic2lkIjoiMmM5ZDFlNGYtN2EzYi00YzhkLTllMGYtMWEyYjNjNGQ1ZTZmIiwiaXNzIjoiZmVlZ2F0ZSIsInN1YiI6IjhlN2Q2YzViLTRhM2ItNGMyZC05ZTFmLTBhMWIyYzNkNGU1ZiIsImlhdCI6MTc5NTQ1MDAwMCwiZXhwIjoxNzk1NDUzNjAwLCJqdGkiOiI0YjNhMmMxZC05ZThmLTRhN2ItOGM2ZC01ZTRmM2EyYjFjMGQifQ.3xmmEcU8fjCP5gNfLC5CXxRCowwRIAL_mGGZl55X4w9Iejq_4WxfLWav-0vg-fji6WOJdLsc2oZ5nMkHdMoFCA';

export const TokenResponse = Component(
  'TokenResponse',
  Type.Object(
    {
      token: Type.Object({
        access_token: Type.String({
          description:
            'Bearer token: a JWT (RFC 9068, header typ "at+jwt", EdDSA/Ed25519) whose signature verifies against GET /.well-known/jwks.json. Claims: iss, sub (user id), iat, exp (= iat + expires_in), jti, user_type, customer_id, sid (the login).',
        }),
        token_type: Type.Literal('Bearer'),
        expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
        refresh_token: Type.String({ description: 'Single-use token for POST /v1/login/refresh' }),
        refresh_expires_in: Type.Integer({
          description:
            'Seconds until the refresh token expires: REFRESH_TOKEN_TTL_SECONDS, or less when the login reaches SESSION_MAX_AGE_SECONDS sooner',
        }),
      }),
    },
    {
      description: 'A new access token and refresh token',
      examples: [
        {
          token: {
            access_token: EXAMPLE_ACCESS_TOKEN,
            token_type: 'Bearer',
            expires_in: 3600,
            refresh_token: 'fgr_Vq3xN8p2Lk7sT0aB4cD9eF1gH6iJ5kL2mN3oP4qR5sT',
            refresh_expires_in: 2592000,
          },
        },
      ],
    },
  ),
);

export const LoginResponse = Component(
  'LoginResponse',
  Type.Object(
    {
      token: Type.Optional(TokenResponse.properties.token),
      challenge: Type.Optional(
        Type.Object({
          name: ChallengeName,
          session: Type.String({ description: 'Opaque, good once, for 5 minutes: POST /v1/login/challenge' }),
        }),
      ),
      recovery_codes: Type.Optional(
        Type.Array(Type.String(), {
          description: 'MFA_SETUP answered: the 10 single-use recovery codes, shown only here',
        }),
      ),
    },
    {
      description: 'The tokens, or instead a challenge the login must answer first',
      examples: [
        TokenResponse.examples[0],
        { challenge: { name: 'NEW_PASSWORD_REQUIRED', session: EXAMPLE_CHALLENGE_SESSION } },
      ],
    },
  ),
);

export const CurrentUser = Component(
  'CurrentUser',
  Type.Object(
    {
      id: Uuid,
      user: Type.String({ description: 'E-mail of the user' }),
      user_type: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]),
      customer_id: Uuid,
      merchant_id: Nullable(Uuid, 'null for customer users'),
      auth: Type.Union([Type.Literal('token'), Type.Literal('api_key')], {
        description: 'How this request was authenticated',
      }),
    },
    {
      description: 'The caller of the request',
      examples: [
        {
          id: '8e7d6c5b-4a3b-4c2d-9e1f-0a1b2c3d4e5f',
          user: 'admin@acme.example',
          user_type: 'CUSTOMER',
          customer_id: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
          merchant_id: null,
          auth: 'token',
        },
      ],
    },
  ),
);

export const JsonWebKeySet = Component(
  'JsonWebKeySet',
  Type.Object(
    {
      keys: Type.Array(
        Type.Object({
          kty: Type.Literal('OKP'),
          crv: Type.Literal('Ed25519'),
          x: Type.String({ description: 'Public key, base64url' }),
          kid: Type.String({
            description: 'Key id: the RFC 7638 thumbprint, as in the header of the tokens it signed',
          }),
          alg: Type.Literal('EdDSA'),
          use: Type.Literal('sig'),
        }),
      ),
    },
    {
      description: 'A JWK Set (RFC 7517) of public keys',
      examples: [
        {
          keys: [
            {
              kty: 'OKP',
              crv: 'Ed25519',
              x: 'DvroZUrwMANvegqSyLO2C52MAjDGTTQk5TI_HcwYv7E',
              kid: 'fYPx3Es2uRsnqiktGCGQDJViIi81dSuMTAU_4Ezl87c',
              alg: 'EdDSA',
              use: 'sig',
            },
          ],
        },
      ],
    },
  ),
);
