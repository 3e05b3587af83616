/** HTTP only: translate requests to the auth service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { changeContext, clientGone } from '../../lib/request-context.js';
import { NoContent, Ref, SECURITY_ANY, SECURITY_BEARER } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, READS_BODY, WITH_BODY, problems } from '../../schemas/problems.js';
import {
  ChallengeRequest,
  CurrentUser,
  JsonWebKeySet,
  LoginBody,
  LoginResponse,
  RefreshBody,
  TokenResponse,
} from './auth-schemas.js';
import { AUTH_DOCS } from './auth-docs.js';

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { auth } = app.services;

  app.post('/v1/login', {
    // Under a storm most logins are refused: refuse them before parsing anything.
    onRequest: async () => auth.assertLoginCapacity(),
    schema: {
      ...AUTH_DOCS.login,
      body: Ref(LoginBody),
      response: {
        200: Ref(LoginResponse),
        ...problems(
          ...WITH_BODY,
          'invalid_credentials',
          'too_many_login_attempts',
          'rate_limited',
          'server_busy',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      const answer = await auth.login(request.body, changeContext(request), {
        address: request.ip,
        gone: clientGone(reply),
      });
      reply.header('cache-control', 'no-store');
      return answer;
    },
  });

  app.post('/v1/login/challenge', {
    schema: {
      ...AUTH_DOCS.respondToChallenge,
      body: Ref(ChallengeRequest),
      response: {
        200: Ref(LoginResponse),
        ...problems(
          ...WITH_BODY,
          'weak_password',
          'invalid_challenge',
          'too_many_login_attempts',
          'rate_limited',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      const answer = await auth.respondToChallenge(request.body, changeContext(request), request.ip);
      reply.header('cache-control', 'no-store');
      return answer;
    },
  });

  app.post('/v1/login/refresh', {
    schema: {
      ...AUTH_DOCS.refreshToken,
      body: Ref(RefreshBody),
      response: {
        200: Ref(TokenResponse),
        ...problems(
          ...WITH_BODY,
          'invalid_refresh_token',
          'refresh_token_reused',
          'mfa_required',
          'rate_limited',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      const token = await auth.refresh(request.body.refresh_token, changeContext(request), request.ip);
      reply.header('cache-control', 'no-store');
      return { token };
    },
  });

  app.post('/v1/logout', {
    onRequest: app.authenticate,
    config: { permission: 'none', anyRole: true },
    schema: {
      ...AUTH_DOCS.logout,
      security: SECURITY_BEARER,
      response: { 204: NoContent, ...problems(...AUTHENTICATED_WRITE, ...READS_BODY, 'forbidden', ...ALWAYS) },
    },
    handler: async (request, reply) => {
      await auth.logout(principalOf(request), changeContext(request));
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/logout/all', {
    onRequest: app.authenticate,
    config: { permission: 'none', anyRole: true },
    schema: {
      ...AUTH_DOCS.logoutEverywhere,
      security: SECURITY_BEARER,
      response: { 204: NoContent, ...problems(...AUTHENTICATED_WRITE, ...READS_BODY, 'forbidden', ...ALWAYS) },
    },
    handler: async (request, reply) => {
      await auth.logoutAll(principalOf(request), changeContext(request));
      return reply.code(204).send(null);
    },
  });

  app.get('/.well-known/jwks.json', {
    logLevel: 'warn',
    schema: {
      ...AUTH_DOCS.getJsonWebKeySet,
      response: { 200: Ref(JsonWebKeySet), ...problems('validation_failed', ...ALWAYS) },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return auth.jwks();
    },
  });

  app.get('/v1/users/me', {
    config: { permission: 'none' },
    onRequest: app.authenticate,
    schema: {
      ...AUTH_DOCS.getCurrentUser,
      security: SECURITY_ANY,
      response: { 200: Ref(CurrentUser), ...problems(...AUTHENTICATED, ...ALWAYS) },
    },
    // Nothing to wait for, so not async: the most called read makes no promise (lib/lifecycle-hooks.ts).
    handler: (request) => {
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
