/** HTTP only: translate merchant listing requests to the merchants service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { ALWAYS, AUTHENTICATED, Ref, SECURITY_ANY, problems } from '../../schemas/common.js';
import { MerchantListing, MerchantListQuery } from './merchants-schemas.js';

export const merchantsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { merchants } = app.services;

  app.get('/v1/merchants', {
    onRequest: app.authenticate,
    schema: {
      operationId: 'listMerchants',
      tags: ['merchants'],
      summary: "List the caller's merchants",
      description:
        'A customer caller sees every merchant of its customer; a merchant caller sees only itself. Newest first (create_date, then id). ' +
        '`q` searches among them: names containing the text in any letter case, or ids starting with it (so a full id finds that one merchant). ' +
        'Unknown query parameters are a 400.',
      security: SECURITY_ANY,
      querystring: MerchantListQuery,
      response: { 200: Ref(MerchantListing), ...problems(...AUTHENTICATED, ...ALWAYS) },
    },
    handler: async (request) => merchants.list(principalOf(request), request.query),
  });
};
