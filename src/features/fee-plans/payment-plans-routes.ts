/** HTTP only: translate catalogue listing requests to the payment plans service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/authentication.js';
import { Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, problems } from '../../schemas/problems.js';
import { PaymentPlanListing, PaymentPlanListQuery } from './payment-plans-schemas.js';
import { PAYMENT_PLANS_DOCS } from './payment-plans-docs.js';

export const paymentPlansRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { paymentPlans } = app.services;

  app.get('/v1/payment-plans', {
    config: { permission: 'fee_rules:read' },
    onRequest: app.authenticate,
    schema: {
      ...PAYMENT_PLANS_DOCS.listPaymentPlans,
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
