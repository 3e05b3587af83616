import { type Static, Type } from '@sinclair/typebox';
import { Component, Email, Nullable, PageQuery, Text, Timestamp, Uuid } from '../../schemas/common.js';

const RoleSchema = Type.Union([Type.Literal('ADMIN'), Type.Literal('MEMBER'), Type.Literal('VIEWER')], {
  description: 'ADMIN: everything, users too; MEMBER: everything but users; VIEWER: reads only',
});
const Name = Text({ minLength: 1, maxLength: 200 });
const Description = Text({ maxLength: 1000 });
const EXAMPLE_ID = '8e7d6c5b-4a3b-4c2d-9e1f-0a1b2c3d4e5f';
export const EXAMPLE_CUSTOMER = '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

const exampleUser = {
  attributes: {
    id: EXAMPLE_ID,
    name: 'Ana Gómez',
    description: 'Back office, payments',
    email: 'ana@acme.example',
    customer_id: [EXAMPLE_CUSTOMER],
    merchant_id: [],
    country: null,
    type: 'CUSTOMER',
    scope: 'LOGIN',
    role: 'MEMBER',
  },
  status: 'CONFIRMED',
  enabled: true,
  mfa_enabled: false,
  audit: { creation_date: '2026-11-20T10:00:00.000Z', update_date: '2026-11-21T09:30:00.000Z' },
};

const userProperties = {
  attributes: Type.Object({
    id: Uuid,
    name: Nullable(Type.String()),
    description: Nullable(Type.String()),
    email: Type.String({ description: 'E-mail, lower case: the user name of a login user' }),
    customer_id: Type.Array(Uuid, { description: 'The customer (one)' }),
    merchant_id: Type.Array(Uuid, { description: 'The merchant of a MERCHANT user (one); empty for CUSTOMER users' }),
    country: Nullable(Type.String(), 'Not kept by feegate: always null'),
    type: Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')]),
    scope: Type.Union([Type.Literal('LOGIN'), Type.Literal('API_KEY')], {
      description: 'LOGIN: logs in with a password; API_KEY: an integration user that holds API keys',
    }),
    role: Type.Union([Type.Literal('ADMIN'), Type.Literal('MEMBER'), Type.Literal('VIEWER'), Type.Null()], {
      description: 'ADMIN, MEMBER or VIEWER; null for integration users',
    }),
  }),
  status: Type.Union([Type.Literal('CONFIRMED'), Type.Literal('FORCE_CHANGE_PASSWORD'), Type.Literal('DISABLED')], {
    description: "Cognito's names: FORCE_CHANGE_PASSWORD until a temporary password is replaced",
  }),
  enabled: Type.Boolean(),
  mfa_enabled: Type.Boolean({ description: 'Two-factor codes are on' }),
  audit: Type.Object({ creation_date: Timestamp, update_date: Timestamp }),
};

export const User = Component(
  'User',
  Type.Object(userProperties, {
    description: "A user of the customer, in the platform's shape",
    examples: [exampleUser],
  }),
);

export const CreatedUser = Component(
  'CreatedUser',
  Type.Object(
    {
      ...userProperties,
      temporary_password: Type.String({ description: 'Shown only here; changed at the first login' }),
    },
    {
      description: 'The new user and its temporary password',
      examples: [{ ...exampleUser, status: 'FORCE_CHANGE_PASSWORD', temporary_password: 'q7Vd0-Lx3mTz9KpW2sYb' }],
    },
  ),
);

export const UserListing = Component(
  'UserListing',
  Type.Object(
    {
      users: Type.Array(User),
      metadata: Type.Object({
        size: Type.Integer(),
        total_elements: Type.Integer(),
        total_pages: Type.Integer(),
        number: Type.Integer({ description: 'Zero-based number of the returned page' }),
      }),
    },
    {
      description: "A page of the customer's users, newest first",
      examples: [{ users: [exampleUser], metadata: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
    },
  ),
);

export const ListUsersQuery = Type.Object(
  {
    ...PageQuery,
    email: Type.Optional(Text({ maxLength: 254, description: 'Only the user of this e-mail (any letter case)' })),
    merchantId: Type.Optional({ ...Uuid, description: "Only this merchant's users" }),
    type: Type.Optional(Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')])),
  },
  { additionalProperties: false },
);

export const UserParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const CreateUserBody = Component(
  'CreateUserRequest',
  Type.Object(
    {
      email: Type.Optional(Email),
      name: Type.Optional(Name),
      description: Type.Optional(Description),
      role: Type.Optional(RoleSchema),
      user_type: Type.Optional(
        Type.Union([Type.Literal('CUSTOMER'), Type.Literal('MERCHANT')], {
          description:
            "The platform's CreateUserRequest: CUSTOMER (MERCHANT is a 400: merchant users act through API keys, POST /v1/api-keys with merchant_id)",
        }),
      ),
      attributes: Type.Optional(
        Type.Object(
          {
            email: Email,
            customer_id: { ...Uuid, description: "The caller's customer (another is a 404 customer_not_found)" },
            name: Type.Optional(Name),
          },
          { additionalProperties: false, description: "The platform's CreateUserRequest attributes" },
        ),
      ),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description:
        "A new login user of the caller's customer (role MEMBER unless given): the platform's `{ user_type, attributes: { email, customer_id, name? } }`, or feegate's `{ email, name?, description?, role? }`; one of `email` and `attributes` is required (else a 400 naming email)",
      examples: [
        {
          user_type: 'CUSTOMER',
          attributes: {
            email: 'ana@acme.example',
            customer_id: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
            name: 'Ana Gómez',
          },
        },
        { email: 'ana@acme.example', name: 'Ana Gómez', role: 'MEMBER' },
      ],
    },
  ),
);
export type CreateUserRequest = Static<typeof CreateUserBody>;

export const UpdateUserBody = Component(
  'UpdateUserRequest',
  Type.Object(
    {
      name: Type.Optional(Nullable(Name)),
      description: Type.Optional(Nullable(Description)),
      role: Type.Optional(RoleSchema),
      enabled: Type.Optional(Type.Boolean()),
      revoke_keys: Type.Optional(
        Type.Boolean({
          description:
            'true: also revoke every API key the user created (and the keys those created), mostly with enabled: false',
        }),
      ),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description: 'What changes (at least one field); what is left out stays',
      examples: [{ name: 'Ana Gómez', role: 'VIEWER' }, { enabled: false }, { enabled: false, revoke_keys: true }],
    },
  ),
);

export const TemporaryPassword = Component(
  'TemporaryPassword',
  Type.Object(
    {
      temporary_password: Nullable(
        Type.String(),
        'Shown only here and changed at the next login; null when it was only mailed (delivered_by email)',
      ),
      delivered_by: Type.Union([Type.Literal('response'), Type.Literal('email')], {
        description:
          'response: this answer carries the password (with SMTP_URL set it is mailed too); email: only mailed, since the user had two-factor codes, which the reset turned off',
      }),
    },
    {
      description: 'A new temporary password, or where it went',
      examples: [
        { temporary_password: 'q7Vd0-Lx3mTz9KpW2sYb', delivered_by: 'response' },
        { temporary_password: null, delivered_by: 'email' },
      ],
    },
  ),
);

const Password = Text({ minLength: 1, maxLength: 1024 });

export const ChangePasswordBody = Component(
  'ChangePasswordRequest',
  Type.Object(
    { current_password: Password, new_password: Password },
    {
      additionalProperties: false,
      description: 'The current password and the new one (12..256 characters)',
      examples: [
        { current_password: 'correct horse battery staple', new_password: 'mauve tractor juggles seven owls' },
      ],
    },
  ),
);

export const ForgotPasswordBody = Component(
  'ForgotPasswordRequest',
  Type.Object(
    { user: Text({ minLength: 1, maxLength: 254, description: 'User name (e-mail)' }) },
    {
      additionalProperties: false,
      description: 'Whose password was forgotten',
      examples: [{ user: 'ana@acme.example' }],
    },
  ),
);

export const ConfirmForgotPasswordBody = Component(
  'ConfirmForgotPasswordRequest',
  Type.Object(
    {
      user: Text({ minLength: 1, maxLength: 254 }),
      code: Text({ minLength: 1, maxLength: 64, description: 'The 6-digit code of the mail' }),
      new_password: Password,
    },
    {
      additionalProperties: false,
      description: 'The code of the mail and a new password',
      examples: [{ user: 'ana@acme.example', code: '492017', new_password: 'mauve tractor juggles seven owls' }],
    },
  ),
);

const Code = Text({
  minLength: 1,
  maxLength: 64,
  description: 'A 6-digit TOTP code (or, to turn it off, a recovery code)',
});

export const CodeBody = Component(
  'CodeRequest',
  Type.Object(
    { code: Code },
    { additionalProperties: false, description: 'A two-factor code', examples: [{ code: '123456' }] },
  ),
);

/** Optional in the schema so that a missing one is answered like a wrong one: 401, counted as a failed login. */
const CurrentPassword = Type.Optional(
  Text({
    minLength: 1,
    maxLength: 1024,
    description: "The caller's current password: required, missing or wrong is 401 invalid_credentials",
  }),
);

export const StartTotpBody = Component(
  'TotpEnrolmentRequest',
  Type.Object(
    { current_password: CurrentPassword },
    {
      additionalProperties: false,
      description: 'The current password, to enrol two-factor codes',
      examples: [{ current_password: 'correct horse battery staple' }],
    },
  ),
);

export const DisableTotpBody = Component(
  'TotpDisableRequest',
  Type.Object(
    { code: Code, current_password: CurrentPassword },
    {
      additionalProperties: false,
      description: 'The current password and a two-factor code (or a recovery code), to turn them off',
      examples: [{ code: '123456', current_password: 'correct horse battery staple' }],
    },
  ),
);

export const TotpEnrolment = Component(
  'TotpEnrolment',
  Type.Object(
    {
      secret: Type.String({ description: 'Base32 secret, for typing into an authenticator app' }),
      otpauth_url: Type.String({ description: 'otpauth://totp/… URL, to show as a QR code' }),
    },
    {
      description: 'A new TOTP secret, active once a first code is verified',
      examples: [
        {
          secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
          otpauth_url:
            'otpauth://totp/feegate:ana%40acme.example?issuer=feegate&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30',
        },
      ],
    },
  ),
);

export const RecoveryCodes = Component(
  'RecoveryCodes',
  Type.Object(
    { recovery_codes: Type.Array(Type.String(), { description: '10 single-use codes, shown only here' }) },
    { description: 'Two-factor codes are on', examples: [{ recovery_codes: ['3f9a1-0c7d2', '8b2e4-71d0a'] }] },
  ),
);
