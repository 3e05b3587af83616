/** HTTP only: translate requests to the auth service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { changeContext, clientGone } from '../../lib/request-context.js';
import { ALWAYS, AUTHENTICATED, NoContent, SECURITY_ANY, SECURITY_BEARER, WITH_BODY, problems } from '../../schemas/common.js';
import { CurrentUser, LoginBody, RefreshBody, TokenResponse } from './auth-schemas.js';

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { auth } = app.services;

  app.post('/v1/login', {
    // Under a storm most logins are refused: refuse them before parsing anything.
    onRequest: async () => auth.assertLoginCapacity(),
    schema: {
      tags: ['auth'],
      summary: 'Log in with user and password',
      description:
        'Only CUSTOMER users with a password can log in. Every failure is the same 401 invalid_credentials. After 10 failures for one user name within 15 minutes: 429 with Retry-After. When too many logins wait for password hashing: 503 server_busy with Retry-After; a waiting login whose client hangs up leaves the queue unhashed.',
      body: LoginBody,
      response: { 200: TokenResponse, ...problems(...WITH_BODY, 401, 429, ...ALWAYS) },
    },
    handler: async (request, reply) => {
      const token = await auth.login(request.body, changeContext(request), clientGone(reply));
      reply.header('cache-control', 'no-store');
      return { token };
    },
  });

  app.post('/v1/login/refresh', {
    schema: {
      tags: ['auth'],
      summary: 'Exchange a refresh token for a new token object',
      description: 'Refresh tokens rotate: each is good once. Presenting a used one revokes the whole login.',
      body: RefreshBody,
      response: { 200: TokenResponse, ...problems(...WITH_BODY, 401, ...ALWAYS) },
    },
    handler: async (request, reply) => {
      const token = await auth.refresh(request.body.refresh_token, changeContext(request));
      reply.header('cache-control', 'no-store');
      return { token };
    },
  });

  app.post('/v1/logout', {
    onRequest: app.authenticate,
    schema: {
      tags: ['auth'],
      summary: 'Revoke the access token and its refresh family',
      security: SECURITY_BEARER,
      response: { 204: NoContent, ...problems(...AUTHENTICATED, 403, ...ALWAYS) },
    },
    handler: async (request, reply) => {
      await auth.logout(principalOf(request), changeContext(request));
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/users/me', {
    onRequest: app.authenticate,
    schema: {
      tags: ['auth'],
      summary: 'The authenticated caller',
      security: SECURITY_ANY,
      response: { 200: CurrentUser, ...problems(...AUTHENTICATED, ...ALWAYS) },
    },
    handler: async (request) => {
      const p = principalOf(request);
      return {
        id: p.userId,
        user: p.email,
        user_type: p.userType,
        customer_id: p.customerId,
        merchant_id: p.merchantId,
        auth: p.auth,
      };
    },
  });
};
