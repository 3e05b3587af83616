/** HTTP only: translate requests to the API keys service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { ALWAYS, AUTHENTICATED, NoContent, SECURITY_ANY, WITH_BODY, problems } from '../../schemas/common.js';
import { ApiKeyListing, ApiKeyParams, CreateApiKeyBody, CreatedApiKey, ListApiKeysQuery } from './api-keys-schemas.js';

export const apiKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { apiKeys } = app.services;

  app.post('/v1/api-keys', {
    onRequest: app.authenticate,
    schema: {
      tags: ['api-keys'],
      summary: 'Create an API key',
      description:
        'Without merchant_id: a CUSTOMER key (customer callers only). With merchant_id: a MERCHANT key for a merchant of customer_id (merchant callers: their own merchant only). Unknown e-mails become integration users; at most 10 ENABLED keys per user. The full key is returned only here.',
      security: SECURITY_ANY,
      body: CreateApiKeyBody,
      response: { 201: CreatedApiKey, ...problems(...WITH_BODY, ...AUTHENTICATED, 403, 404, 409, ...ALWAYS) },
    },
    handler: async (request, reply) => {
      const record = await apiKeys.create(principalOf(request), request.body, changeContext(request));
      return reply.code(201).header('cache-control', 'no-store').send(record);
    },
  });

  app.get('/v1/api-keys', {
    onRequest: app.authenticate,
    schema: {
      tags: ['api-keys'],
      summary: 'List API keys',
      description:
        "Customer callers: the customer's CUSTOMER keys (or one merchant's keys with merchant_id). Merchant callers: their merchant's keys. Newest first; keys are masked.",
      security: SECURITY_ANY,
      querystring: ListApiKeysQuery,
      response: { 200: ApiKeyListing, ...problems(...AUTHENTICATED, 404, ...ALWAYS) },
    },
    handler: async (request) => {
      const { status, ...rest } = request.query;
      return apiKeys.list(principalOf(request), { ...rest, status: status.toUpperCase() as 'ENABLED' | 'DELETED' });
    },
  });

  app.delete('/v1/api-keys/:id', {
    onRequest: app.authenticate,
    schema: {
      tags: ['api-keys'],
      summary: 'Delete (revoke) an API key',
      description: 'The key becomes DELETED and is refused at once by every instance. Deleting a deleted key is again 204.',
      security: SECURITY_ANY,
      params: ApiKeyParams,
      response: { 204: NoContent, ...problems(...AUTHENTICATED, 404, ...ALWAYS) },
    },
    handler: async (request, reply) => {
      await apiKeys.remove(principalOf(request), request.params.id, changeContext(request));
      return reply.code(204).send(null);
    },
  });
};
