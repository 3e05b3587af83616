/** HTTP only: translate requests to the auth service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { changeContext, clientGone } from '../../lib/request-context.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, NoContent, READS_BODY, Ref, SECURITY_ANY, SECURITY_BEARER, WITH_BODY, problems } from '../../schemas/common.js';
import { CurrentUser, JsonWebKeySet, LoginBody, RefreshBody, TokenResponse } from './auth-schemas.js';

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { auth } = app.services;

  app.post('/v1/login', {
    // Under a storm most logins are refused: refuse them before parsing anything.
    onRequest: async () => auth.assertLoginCapacity(),
    schema: {
      operationId: 'login',
      tags: ['auth'],
      summary: 'Log in with user and password',
      description:
        'Only CUSTOMER users with a password can log in. Every failure is the same 401 invalid_credentials. Failed logins are counted per user name and client address: after 10 within 15 minutes that pair gets 429 too_many_login_attempts with Retry-After; per user name from all addresses the limit is 100 within 15 minutes, so guesses from one address never lock the owner out elsewhere. Each attempt is counted before its password is checked, so parallel guesses never check more than the limit; a successful login clears the count of its address; the counts are shared by every instance with REDIS_URL. A wrong password of a login user is recorded as auth.login_failed, a login as auth.login, in the audit trail of its customer. Per client address: 429 rate_limited beyond RATE_LIMIT_ANONYMOUS_PER_MINUTE (default 60), with Retry-After and RateLimit-* headers. When too many logins wait for password hashing: 503 server_busy with Retry-After; a waiting login whose client hangs up leaves the queue unhashed.',
      body: Ref(LoginBody),
      response: {
        200: Ref(TokenResponse),
        ...problems(...WITH_BODY, 'invalid_credentials', 'too_many_login_attempts', 'rate_limited', 'server_busy', ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      const token = await auth.login(request.body, changeContext(request), { address: request.ip, gone: clientGone(reply) });
      reply.header('cache-control', 'no-store');
      return { token };
    },
  });

  app.post('/v1/login/refresh', {
    schema: {
      operationId: 'refreshToken',
      tags: ['auth'],
      summary: 'Exchange a refresh token for a new token object',
      description:
        'Refresh tokens rotate: each is good once. Presenting a used one is a 401 `refresh_token_reused` and revokes the whole login (its access tokens are refused at once by every instance). Unknown, expired or revoked: 401 `invalid_refresh_token`. The refresh tokens of a login live at most SESSION_MAX_AGE_SECONDS (default 30 days) from the login, however often they are refreshed: `refresh_expires_in` never reaches past that, and after it the login must be made again. A detected reuse is recorded as auth.refresh_reuse_detected in the audit trail of the customer. Per client address: 429 rate_limited beyond RATE_LIMIT_ANONYMOUS_PER_MINUTE (default 60), with Retry-After and RateLimit-* headers.',
      body: Ref(RefreshBody),
      response: { 200: Ref(TokenResponse), ...problems(...WITH_BODY, 'invalid_refresh_token', 'refresh_token_reused', 'rate_limited', ...ALWAYS) },
    },
    handler: async (request, reply) => {
      const token = await auth.refresh(request.body.refresh_token, changeContext(request), request.ip);
      reply.header('cache-control', 'no-store');
      return { token };
    },
  });

  app.post('/v1/logout', {
    onRequest: app.authenticate,
    schema: {
      operationId: 'logout',
      tags: ['auth'],
      summary: 'Revoke the access token and its refresh family',
      description:
        'Every access and refresh token of this login stops working at once, on every instance. With an API key: 403 `forbidden` (keys are revoked with DELETE /v1/api-keys/{id}).',
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
    schema: {
      operationId: 'logoutEverywhere',
      tags: ['auth'],
      summary: "End every login of the caller's user",
      description:
        "Every access and refresh token of every login of this user (this one included) stops working, on every instance: log out everywhere, e.g. after a device was lost. Recorded as auth.logout_all in the customer's audit trail. With an API key: 403 `forbidden` (keys are revoked with DELETE /v1/api-keys/{id}).",
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
      operationId: 'getJsonWebKeySet',
      tags: ['auth'],
      summary: 'Public keys that verify access tokens',
      description:
        'The public keys (JWK Set, RFC 7517) of every signing key that can still verify a live access token: the key that signs now, and a rotated one until the tokens it signed have expired. No private material. Cacheable for 5 minutes; a verifier that meets an unknown kid fetches it again. Unknown query parameters are a 400.',
      response: { 200: Ref(JsonWebKeySet), ...problems('validation_failed', ...ALWAYS) },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return auth.jwks();
    },
  });

  app.get('/v1/users/me', {
    onRequest: app.authenticate,
    schema: {
      operationId: 'getCurrentUser',
      tags: ['auth'],
      summary: 'The authenticated caller',
      description: 'Who the credentials belong to, and whether they are a token or an API key.',
      security: SECURITY_ANY,
      response: { 200: Ref(CurrentUser), ...problems(...AUTHENTICATED, ...ALWAYS) },
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
