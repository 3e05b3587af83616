/** HTTP only: translate requests to the users service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { NoContent, Ref, SECURITY_ANY, SECURITY_BEARER } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, WITH_BODY, problems } from '../../schemas/problems.js';
import { CustomerSettings, UpdateCustomerBody } from './customer-settings-schemas.js';
import { USERS_DOCS } from './users-docs.js';
import {
  ChangePasswordBody,
  CodeBody,
  ConfirmForgotPasswordBody,
  CreatedUser,
  CreateUserBody,
  DisableTotpBody,
  ForgotPasswordBody,
  ListUsersQuery,
  RecoveryCodes,
  StartTotpBody,
  TemporaryPassword,
  TotpEnrolment,
  UpdateUserBody,
  User,
  UserListing,
  UserParams,
} from './users-schemas.js';

export const usersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { users } = app.services;
  const noStore = { 'cache-control': 'no-store' };

  app.get('/v1/users', {
    config: { permission: 'users:read' },
    onRequest: app.authenticate,
    schema: {
      ...USERS_DOCS.listUsers,
      security: SECURITY_ANY,
      querystring: ListUsersQuery,
      response: { 200: Ref(UserListing), ...problems(...AUTHENTICATED, 'forbidden', ...ALWAYS) },
    },
    handler: async (request) => users.list(principalOf(request), request.query),
  });

  app.post('/v1/users', {
    config: { permission: 'none' },
    onRequest: app.authenticate,
    schema: {
      ...USERS_DOCS.createUser,
      security: SECURITY_BEARER,
      body: Ref(CreateUserBody),
      response: {
        201: Ref(CreatedUser),
        ...problems(...WITH_BODY, ...AUTHENTICATED_WRITE, 'user_conflict', 'customer_not_found', ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      const created = await users.create(principalOf(request), request.body, changeContext(request));
      return reply.code(201).headers(noStore).send(created);
    },
  });

  app.patch('/v1/users/:id', {
    config: { permission: 'none' },
    onRequest: app.authenticate,
    schema: {
      ...USERS_DOCS.updateUser,
      security: SECURITY_BEARER,
      params: UserParams,
      body: Ref(UpdateUserBody),
      response: {
        200: Ref(User),
        ...problems(...WITH_BODY, ...AUTHENTICATED_WRITE, 'user_not_found', 'user_conflict', 'last_admin', ...ALWAYS),
      },
    },
    handler: async (request) =>
      users.update(principalOf(request), request.params.id, request.body, changeContext(request)),
  });

  app.post('/v1/users/:id/reset-password', {
    config: { permission: 'none' },
    onRequest: app.authenticate,
    schema: {
      ...USERS_DOCS.resetUserPassword,
      security: SECURITY_BEARER,
      params: UserParams,
      response: {
        200: Ref(TemporaryPassword),
        ...problems(...WITH_BODY, ...AUTHENTICATED_WRITE, 'user_not_found', ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      const answer = await users.resetPassword(principalOf(request), request.params.id, changeContext(request));
      return reply.headers(noStore).send(answer);
    },
  });

  app.post('/v1/users/me/password', {
    onRequest: app.authenticate,
    config: { permission: 'none', anyRole: true },
    schema: {
      ...USERS_DOCS.changeOwnPassword,
      security: SECURITY_BEARER,
      body: Ref(ChangePasswordBody),
      response: {
        204: NoContent,
        ...problems(
          ...WITH_BODY,
          ...AUTHENTICATED_WRITE,
          'weak_password',
          'invalid_credentials',
          'forbidden',
          'too_many_login_attempts',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      await users.changeOwnPassword(principalOf(request), request.body, changeContext(request), request.ip);
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/login/forgot-password', {
    schema: {
      ...USERS_DOCS.forgotPassword,
      body: Ref(ForgotPasswordBody),
      response: { 202: NoContent, ...problems(...WITH_BODY, 'rate_limited', ...ALWAYS) },
    },
    handler: async (request, reply) => {
      users.forgotPassword(request.body.user, changeContext(request));
      return reply.code(202).send('' as never);
    },
  });

  app.post('/v1/login/confirm-forgot-password', {
    schema: {
      ...USERS_DOCS.confirmForgotPassword,
      body: Ref(ConfirmForgotPasswordBody),
      response: {
        204: NoContent,
        ...problems(...WITH_BODY, 'invalid_code', 'weak_password', 'rate_limited', ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      await users.confirmForgotPassword(request.body, changeContext(request));
      return reply.code(204).send(null);
    },
  });

  const mfaProblems = (...codes: Parameters<typeof problems>) =>
    problems(...WITH_BODY, ...AUTHENTICATED_WRITE, 'forbidden', ...codes, ...ALWAYS);

  app.post('/v1/users/me/mfa/totp', {
    onRequest: app.authenticate,
    // No body is a missing password: 401 and a failed login, as the contract says, rather than a 400.
    preValidation: async (request) => {
      request.body ??= {};
    },
    config: { permission: 'none', anyRole: true, mfaSetup: true },
    schema: {
      ...USERS_DOCS.startTotp,
      security: SECURITY_BEARER,
      body: Ref(StartTotpBody),
      response: {
        200: Ref(TotpEnrolment),
        ...mfaProblems('invalid_credentials', 'too_many_login_attempts', 'mfa_already_enabled'),
      },
    },
    handler: async (request, reply) => {
      const enrolment = await users.startTotp(
        principalOf(request),
        request.body.current_password,
        changeContext(request),
        request.ip,
      );
      return reply.headers(noStore).send(enrolment);
    },
  });

  app.post('/v1/users/me/mfa/totp/verify', {
    onRequest: app.authenticate,
    config: { permission: 'none', anyRole: true, mfaSetup: true },
    schema: {
      ...USERS_DOCS.verifyTotp,
      security: SECURITY_BEARER,
      body: Ref(CodeBody),
      response: { 200: Ref(RecoveryCodes), ...mfaProblems('invalid_code', 'too_many_login_attempts') },
    },
    handler: async (request, reply) => {
      const answer = await users.verifyTotp(
        principalOf(request),
        request.body.code,
        changeContext(request),
        request.ip,
      );
      return reply.headers(noStore).send(answer);
    },
  });

  app.delete('/v1/users/me/mfa/totp', {
    onRequest: app.authenticate,
    config: { permission: 'none', anyRole: true },
    schema: {
      ...USERS_DOCS.disableTotp,
      security: SECURITY_BEARER,
      body: Ref(DisableTotpBody),
      response: {
        204: NoContent,
        ...mfaProblems('invalid_credentials', 'invalid_code', 'too_many_login_attempts'),
      },
    },
    handler: async (request, reply) => {
      await users.disableTotp(principalOf(request), request.body, changeContext(request), request.ip);
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/customers/me', {
    config: { permission: 'none' },
    onRequest: app.authenticate,
    schema: {
      ...USERS_DOCS.getCustomer,
      security: SECURITY_ANY,
      response: { 200: Ref(CustomerSettings), ...problems(...AUTHENTICATED, ...ALWAYS) },
    },
    handler: async (request) => users.customer(principalOf(request)),
  });

  app.patch('/v1/customers/me', {
    config: { permission: 'none' },
    onRequest: app.authenticate,
    // Every field is optional, so the body is too.
    preValidation: async (request) => {
      request.body ??= {};
    },
    schema: {
      ...USERS_DOCS.updateCustomer,
      security: SECURITY_BEARER,
      body: Ref(UpdateCustomerBody),
      response: { 200: Ref(CustomerSettings), ...problems(...WITH_BODY, ...AUTHENTICATED_WRITE, ...ALWAYS) },
    },
    handler: async (request) => users.updateCustomer(principalOf(request), request.body, changeContext(request)),
  });
};
