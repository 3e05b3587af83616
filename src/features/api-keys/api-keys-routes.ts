/** HTTP only: translate requests to the API keys service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { NoContent, Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, READS_BODY, WITH_BODY, problems } from '../../schemas/problems.js';
import type { ApiKeyStatus } from './api-keys-service.js';
import {
  ApiKeyListing,
  ApiKeyParams,
  CreateApiKeyBody,
  CreatedApiKey,
  ListApiKeysQuery,
  SdkCreatedKey,
  SdkMerchantKeyBody,
  ListedApiKey,
  RollApiKeyBody,
  UpdateApiKeyBody,
} from './api-keys-schemas.js';
import { API_KEYS_DOCS } from './api-keys-docs.js';

/** What a key creation may answer besides its 201, on either of its paths. */
const CREATE_KEY_PROBLEMS = problems(
  ...WITH_BODY,
  ...AUTHENTICATED_WRITE,
  'forbidden',
  'key_escalation',
  'customer_not_found',
  'merchant_not_found',
  'user_conflict',
  'api_key_limit_reached',
  ...ALWAYS,
);

/** The JSON of each listing page as served, keyed by the page object the service's cache hands out. */
const listingBodies = new WeakMap<object, string>();

export const apiKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { apiKeys } = app.services;

  app.post('/v1/api-keys', {
    config: { permission: 'api_keys:write' },
    onRequest: app.authenticate,
    schema: {
      ...API_KEYS_DOCS.createApiKey,
      security: SECURITY_ANY,
      body: Ref(CreateApiKeyBody),
      response: {
        201: Ref(CreatedApiKey),
        ...CREATE_KEY_PROBLEMS,
      },
    },
    handler: async (request, reply) => {
      const record = await apiKeys.create(principalOf(request), request.body, changeContext(request));
      return reply.code(201).header('cache-control', 'no-store').send(record);
    },
  });

  // The platform SDK's merchant key path (at the root and under /api): POST /v1/api-keys with merchant_id.
  app.post('/auth/users', {
    onRequest: app.authenticate,
    config: { permission: 'api_keys:write', sdkCredentials: true },
    schema: {
      ...API_KEYS_DOCS.createSdkMerchantKey,
      security: SECURITY_ANY,
      body: Ref(SdkMerchantKeyBody),
      response: {
        201: Ref(SdkCreatedKey),
        ...CREATE_KEY_PROBLEMS,
      },
    },
    handler: async (request, reply) => {
      const record = await apiKeys.create(principalOf(request), request.body, changeContext(request));
      // The answer's schema keeps the platform's fields only.
      const answer = { ...record, merchant_id: request.body.merchant_id };
      return reply.code(201).header('cache-control', 'no-store').send(answer);
    },
  });

  app.get('/v1/api-keys', {
    config: { permission: 'api_keys:read' },
    onRequest: app.authenticate,
    schema: {
      ...API_KEYS_DOCS.listApiKeys,
      security: SECURITY_ANY,
      querystring: ListApiKeysQuery,
      response: { 200: Ref(ApiKeyListing), ...problems(...AUTHENTICATED, 'merchant_not_found', ...ALWAYS) },
    },
    handler: async (request, reply) => {
      const { status, ...rest } = request.query;
      const page = await apiKeys.list(principalOf(request), { ...rest, status: status.toUpperCase() as ApiKeyStatus });
      // A page served from the listing cache is the same object until a key change drops it: its JSON is
      // made once, not on every request (serializing ten keys cost more than everything else the route does).
      let body = listingBodies.get(page);
      if (body === undefined) {
        // Checked against the 200 schema's type here, since the text below is not.
        const listing: Static<typeof ApiKeyListing> = page;
        body = String(reply.serializeInput(listing as never, '200'));
        listingBodies.set(page, body);
      }
      // The 200 schema documents this text; Fastify sends a string of a JSON type as it is.
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  });

  app.patch('/v1/api-keys/:id', {
    config: { permission: 'api_keys:write' },
    onRequest: app.authenticate,
    schema: {
      ...API_KEYS_DOCS.updateApiKey,
      security: SECURITY_ANY,
      params: ApiKeyParams,
      body: Ref(UpdateApiKeyBody),
      response: {
        200: Ref(ListedApiKey),
        ...problems(
          ...WITH_BODY,
          ...AUTHENTICATED_WRITE,
          'key_escalation',
          'api_key_not_found',
          'api_key_not_enabled',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request) =>
      apiKeys.update(principalOf(request), request.params.id, request.body, changeContext(request)),
  });

  app.post('/v1/api-keys/:id/roll', {
    config: { permission: 'api_keys:write' },
    onRequest: app.authenticate,
    // Every field is optional, so the body is too (curl -X POST with no body).
    preValidation: async (request) => {
      request.body ??= {};
    },
    schema: {
      ...API_KEYS_DOCS.rollApiKey,
      security: SECURITY_ANY,
      params: ApiKeyParams,
      body: Ref(RollApiKeyBody),
      response: {
        201: Ref(CreatedApiKey),
        ...problems(
          ...WITH_BODY,
          ...AUTHENTICATED_WRITE,
          'key_escalation',
          'api_key_not_found',
          'api_key_not_enabled',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      const grace = request.body.grace_period_seconds ?? 0;
      const record = await apiKeys.roll(principalOf(request), request.params.id, grace, changeContext(request));
      return reply.code(201).header('cache-control', 'no-store').send(record);
    },
  });

  app.delete('/v1/api-keys/:id', {
    config: { permission: 'api_keys:write' },
    onRequest: app.authenticate,
    schema: {
      ...API_KEYS_DOCS.deleteApiKey,
      security: SECURITY_ANY,
      params: ApiKeyParams,
      response: { 204: NoContent, ...problems(...AUTHENTICATED_WRITE, ...READS_BODY, 'api_key_not_found', ...ALWAYS) },
    },
    handler: async (request, reply) => {
      await apiKeys.remove(principalOf(request), request.params.id, changeContext(request));
      return reply.code(204).send(null);
    },
  });
};
