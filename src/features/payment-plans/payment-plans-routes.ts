/** HTTP only: translate catalogue listing requests to the payment plans service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { ALWAYS, AUTHENTICATED, Ref, SECURITY_ANY, problems } from '../../schemas/common.js';
import { PaymentPlanListing, PaymentPlanListQuery } from './payment-plans-schemas.js';

export const paymentPlansRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { paymentPlans } = app.services;

  app.get('/v1/payment-plans', {
    onRequest: app.authenticate,
    schema: {
      operationId: 'listPaymentPlans',
      tags: ['payment plans'],
      summary: 'List the payment plans the caller may assign',
      description:
        "The catalogue: platform plans plus the caller customer's own plans, never another customer's. " +
        'is_selected is true when the plan is assigned to merchant_id. The is_selected filter needs merchant_id (400 merchant_id_required otherwise). ' +
        'A merchant_id the caller may not see is a 404 merchant_not_found. Newest first (create_date, then id). Unknown query parameters are a 400.',
      security: SECURITY_ANY,
      querystring: PaymentPlanListQuery,
      response: {
        200: Ref(PaymentPlanListing),
        ...problems(...AUTHENTICATED, 'merchant_id_required', 'merchant_not_found', ...ALWAYS),
      },
    },
    handler: async (request) => paymentPlans.list(principalOf(request), request.query),
  });
};
