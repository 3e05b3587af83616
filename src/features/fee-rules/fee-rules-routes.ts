/** HTTP only: translate bulk assignment requests to the fee rules service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { ALWAYS, AUTHENTICATED, SECURITY_ANY, WITH_BODY, problems } from '../../schemas/common.js';
import { BulkAssignAllBody, BulkAssignBody, Created } from './fee-rules-schemas.js';

const ERRORS_422 =
  '422 `unknown_payment_plans` (member `payment_plan_ids`: ids that are not platform plans or plans of the caller customer), ' +
  '`unknown_merchants` (member `merchant_ids`: ids that are not merchants of the caller customer) or ' +
  '`conflicting_payment_plans` (two plans with the same card_brand, payment_method, is_international, has_installments and term; members `payment_plan_ids` and `conflicts`).';

const RULE =
  'Replacement rule: for each target merchant, the current plans that share (card_brand, payment_method, is_international, has_installments) with a sent plan are dropped, then every sent plan is added; all other current plans stay. ' +
  'All or nothing, in one transaction with its audit record; concurrent assignments of one customer run one after another. Merchant callers get 403.';

export const feeRulesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { feeRules } = app.services;
  // Before body validation: a merchant caller learns nothing about the body it sent.
  const customerCallersOnly = async (request: FastifyRequest) => feeRules.assertMayAssign(principalOf(request));
  // What both assignment routes share: who may call them and what they answer.
  const guards = { onRequest: app.authenticate, preValidation: customerCallersOnly };
  const shared = {
    tags: ['fee rules'],
    security: SECURITY_ANY,
    response: { 201: Created, ...problems(...WITH_BODY, ...AUTHENTICATED, 403, 422, ...ALWAYS) },
  };

  app.post('/v1/fee-rules/bulk-assign', {
    ...guards,
    schema: {
      ...shared,
      summary: 'Assign payment plans to the named merchants',
      description: `${RULE} Missing or empty merchant_ids is a 400 merchant_ids_required pointing to /v1/fee-rules/bulk-assign/all. ${ERRORS_422}`,
      body: BulkAssignBody,
    },
    handler: async (request, reply) => {
      await feeRules.assignToMerchants(principalOf(request), request.body, changeContext(request));
      return reply.code(201).send();
    },
  });

  app.post('/v1/fee-rules/bulk-assign/all', {
    ...guards,
    schema: {
      ...shared,
      summary: 'Assign payment plans to every merchant of the customer',
      description: `Targets every merchant of the caller customer at the moment the assignment runs, and no other. merchant_ids is not accepted here (400). ${RULE} ${ERRORS_422}`,
      body: BulkAssignAllBody,
    },
    handler: async (request, reply) => {
      await feeRules.assignToAllMerchants(principalOf(request), request.body, changeContext(request));
      return reply.code(201).send();
    },
  });
};
