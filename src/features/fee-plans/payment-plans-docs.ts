/** What the OpenAPI document says of the payment plan operations; their HTTP is in payment-plans-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

export const PAYMENT_PLANS_DOCS = operationDocs('payment plans', {
  listPaymentPlans: {
    summary: 'List the payment plans the caller may assign',
    description:
      "The catalogue: platform plans plus the caller customer's own plans, never another customer's. " +
      'is_selected is true when the plan is assigned to merchant_id. The is_selected filter needs merchant_id (400 merchant_id_required otherwise). ' +
      'A merchant_id the caller may not see is a 404 merchant_not_found. Newest first (create_date, then id). Unknown query parameters are a 400.',
  },
});
