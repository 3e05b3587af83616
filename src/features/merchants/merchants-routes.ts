/** HTTP only: translate merchant listing requests to the merchants service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { ALWAYS, AUTHENTICATED, Ref, SECURITY_ANY, problems } from '../../schemas/common.js';
import { MerchantListing, MerchantListQuery } from './merchants-schemas.js';
import { MERCHANTS_DOCS } from './merchants-docs.js';

export const merchantsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { merchants } = app.services;

  app.get('/v1/merchants', {
    onRequest: app.authenticate,
    schema: {
      ...MERCHANTS_DOCS.listMerchants,
      security: SECURITY_ANY,
      querystring: MerchantListQuery,
      response: { 200: Ref(MerchantListing), ...problems(...AUTHENTICATED, ...ALWAYS) },
    },
    handler: async (request) => merchants.list(principalOf(request), request.query),
  });
};
