/** HTTP only: translate bulk assignment and fee rule history requests to the fee rules service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperationCode } from '../../error-catalogue.js';
import { Type } from '@sinclair/typebox';
import { heldAnswer, isHeld } from '../../lib/held-changes.js';
import { changeContext } from '../../lib/request-context.js';
import { ChangeRequestAccepted } from '../change-requests/change-requests-schemas.js';
import { principalOf } from '../../plugins/authentication.js';
import { Component, Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, WITH_BODY, problems } from '../../schemas/problems.js';
import {
  AssignmentQuery,
  BulkAssignAllBody,
  BulkAssignBody,
  Created,
  DryRun,
  FeeRulesAt,
  FeeRulesAtQuery,
  MerchantAssignBody,
  MerchantParams,
} from './fee-rules-schemas.js';
import { FEE_RULES_DOCS } from './fee-rules-docs.js';
import type { AssignmentAnswer } from './fee-rules-service.js';
import { ScheduledChangeAccepted } from './scheduled-changes-schemas.js';

/**
 * An assignment's answer: 202 with the change request that holds it for
 * approval (and its Location), 202 with the scheduled change, or 201 without a
 * body. Also the answer an Idempotency-Key keeps with the change
 * (src/plugins/idempotency.ts), made of what the change reports.
 */
const answerOf = (reported: unknown): { status: number; payload?: unknown; location?: string } => {
  if (isHeld(reported)) return heldAnswer(reported);
  return typeof reported === 'object' && reported !== null && 'scheduled_change' in reported
    ? { status: 202, payload: reported }
    : { status: 201 };
};

function answered(reply: FastifyReply, answer: AssignmentAnswer) {
  const { status, payload, location } = answerOf(answer);
  if (location) reply.header('location', location);
  return reply.code(status).send(payload);
}

/** 202: scheduled (effective_at), or held for approval; each example is its component's. */
const HELD_OR_SCHEDULED = Ref(
  Component(
    'AssignmentAccepted',
    Type.Union([Ref(ScheduledChangeAccepted), Ref(ChangeRequestAccepted)], {
      description: 'Scheduled (effective_at), or held for approval (the customer requires it; Location names it)',
      examples: [...(ScheduledChangeAccepted.examples ?? []), ...(ChangeRequestAccepted.examples ?? [])],
    }),
  ),
);

export const feeRulesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { feeRules } = app.services;
  // Before body validation: a merchant caller learns nothing about the body it sent.
  const customerCallersOnly = async (request: FastifyRequest) => feeRules.assertMayAssign(principalOf(request));
  // What both assignment routes share: who may call them and what they answer (`own`: the codes of one alone).
  const guards = {
    onRequest: app.authenticate,
    preValidation: customerCallersOnly,
    config: { permission: 'fee_rules:write' as const, answerOf },
  };
  const shared = { security: SECURITY_ANY, querystring: AssignmentQuery };
  const answers = (...own: OperationCode[]) => ({
    200: Ref(DryRun),
    201: Created,
    202: HELD_OR_SCHEDULED,
    ...problems(
      ...WITH_BODY,
      ...AUTHENTICATED_WRITE,
      ...own,
      'forbidden',
      'customer_not_found',
      'unknown_payment_plans',
      'unknown_merchants',
      'retired_payment_plans',
      'conflicting_payment_plans',
      'server_busy',
      ...ALWAYS,
    ),
  });

  app.post('/v1/fee-rules/bulk-assign', {
    ...guards,
    preValidation: [
      customerCallersOnly,
      async (request: FastifyRequest) => feeRules.assertMerchantsNamed(request.body),
    ],
    schema: {
      ...shared,
      ...FEE_RULES_DOCS.bulkAssignFeeRules,
      body: Ref(BulkAssignBody),
      response: answers('merchant_ids_required', 'inactive_merchants'),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      if (request.query.dry_run)
        return reply.code(200).send(await feeRules.previewForMerchants(principal, request.body));
      return answered(reply, await feeRules.assignToMerchants(principal, request.body, changeContext(request)));
    },
  });

  app.post('/v1/fee-rules/bulk-assign/all', {
    ...guards,
    schema: {
      ...shared,
      ...FEE_RULES_DOCS.bulkAssignFeeRulesToAll,
      body: Ref(BulkAssignAllBody),
      response: answers(),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      if (request.query.dry_run)
        return reply.code(200).send(await feeRules.previewForAllMerchants(principal, request.body));
      return answered(reply, await feeRules.assignToAllMerchants(principal, request.body, changeContext(request)));
    },
  });

  app.post('/v1/merchants/:id/fee-rules', {
    ...guards,
    schema: {
      ...shared,
      ...FEE_RULES_DOCS.assignMerchantFeeRules,
      params: MerchantParams,
      body: Ref(MerchantAssignBody),
      response: answers('merchant_not_found', 'inactive_merchants'),
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const { id } = request.params;
      if (request.query.dry_run)
        return reply.code(200).send(await feeRules.previewForMerchant(principal, id, request.body));
      return answered(reply, await feeRules.assignToMerchant(principal, id, request.body, changeContext(request)));
    },
  });

  app.get('/v1/merchants/:id/fee-rules', {
    config: { permission: 'fee_rules:read' },
    onRequest: app.authenticate,
    schema: {
      ...FEE_RULES_DOCS.getMerchantFeeRules,
      security: SECURITY_ANY,
      params: MerchantParams,
      querystring: FeeRulesAtQuery,
      response: { 200: Ref(FeeRulesAt), ...problems(...AUTHENTICATED, 'merchant_not_found', ...ALWAYS) },
    },
    handler: async (request) => feeRules.rulesAt(principalOf(request), request.params.id, request.query.at),
  });
};
