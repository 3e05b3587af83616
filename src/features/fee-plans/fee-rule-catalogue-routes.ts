/** HTTP only: the fee-rule catalogue and the scheduled changes, translated to their services. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { heldAnswer, isHeld } from '../../lib/held-changes.js';
import { ChangeRequestAccepted } from '../change-requests/change-requests-schemas.js';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { NoContent, NoQuery, Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, READS_BODY, WITH_BODY, problems } from '../../schemas/problems.js';
import {
  FeeRule,
  FeeRuleListing,
  FeeRuleListQuery,
  FeeRuleParams,
  NewFeeRuleBody,
} from './fee-rule-catalogue-schemas.js';
import { FEE_RULES_DOCS } from './fee-rules-docs.js';
import {
  ScheduledChangeListing,
  ScheduledChangeListQuery,
  ScheduledChangeParams,
} from './scheduled-changes-schemas.js';

/** 202: the change is held for approval (the customer requires it; Location names it). */
const HELD = Ref(ChangeRequestAccepted);

/** A new plan's answer, or the change request that holds it; also what an Idempotency-Key keeps. */
const createdOrHeld = (reported: unknown) =>
  isHeld(reported) ? heldAnswer(reported) : { status: 201, payload: reported };

function answered(reply: FastifyReply, answer: { status: number; payload?: unknown; location?: string }) {
  if (answer.location) reply.header('location', answer.location);
  return reply.code(answer.status).send(answer.payload);
}

export const feeRuleCatalogueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { feeRules, feeRuleCatalogue, scheduledChanges } = app.services;
  // Catalogue changes and scheduled changes are a customer's: merchant callers get 403 before their body is read.
  const customerCallersOnly = {
    onRequest: app.authenticate,
    preValidation: async (request: FastifyRequest) => feeRules.assertMayAssign(principalOf(request)),
  };

  app.get('/v1/fee-rules', {
    config: { permission: 'fee_rules:read' },
    onRequest: app.authenticate,
    schema: {
      ...FEE_RULES_DOCS.listFeeRules,
      security: SECURITY_ANY,
      querystring: FeeRuleListQuery,
      response: { 200: Ref(FeeRuleListing), ...problems(...AUTHENTICATED, ...ALWAYS) },
    },
    handler: async (request) => feeRuleCatalogue.list(principalOf(request), request.query),
  });

  app.post('/v1/fee-rules', {
    config: { permission: 'fee_rules:write', answerOf: createdOrHeld },
    ...customerCallersOnly,
    schema: {
      ...FEE_RULES_DOCS.createFeeRule,
      security: SECURITY_ANY,
      querystring: NoQuery,
      body: Ref(NewFeeRuleBody),
      response: {
        201: Ref(FeeRule),
        202: HELD,
        ...problems(
          ...WITH_BODY,
          ...AUTHENTICATED_WRITE,
          'forbidden',
          'customer_not_found',
          'payment_plan_exists',
          'server_busy',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) =>
      answered(
        reply,
        createdOrHeld(await feeRuleCatalogue.create(principalOf(request), request.body, changeContext(request))),
      ),
  });

  app.delete('/v1/fee-rules/:id', {
    config: { permission: 'fee_rules:write' },
    ...customerCallersOnly,
    schema: {
      ...FEE_RULES_DOCS.retireFeeRule,
      security: SECURITY_ANY,
      params: FeeRuleParams,
      querystring: NoQuery,
      response: {
        204: NoContent,
        202: HELD,
        ...problems(
          ...AUTHENTICATED_WRITE,
          ...READS_BODY,
          'forbidden',
          'payment_plan_not_found',
          'server_busy',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      const held = await feeRuleCatalogue.retire(principalOf(request), request.params.id, changeContext(request));
      return answered(reply, held ? heldAnswer(held) : { status: 204, payload: null });
    },
  });

  app.get('/v1/fee-rules/scheduled-changes', {
    config: { permission: 'fee_rules:read' },
    ...customerCallersOnly,
    schema: {
      ...FEE_RULES_DOCS.listScheduledChanges,
      security: SECURITY_ANY,
      querystring: ScheduledChangeListQuery,
      response: { 200: Ref(ScheduledChangeListing), ...problems(...AUTHENTICATED, 'forbidden', ...ALWAYS) },
    },
    handler: async (request) => scheduledChanges.list(principalOf(request), request.query),
  });

  app.delete('/v1/fee-rules/scheduled-changes/:id', {
    config: { permission: 'fee_rules:write' },
    ...customerCallersOnly,
    schema: {
      ...FEE_RULES_DOCS.cancelScheduledChange,
      security: SECURITY_ANY,
      params: ScheduledChangeParams,
      querystring: NoQuery,
      response: {
        204: NoContent,
        202: HELD,
        ...problems(
          ...AUTHENTICATED_WRITE,
          ...READS_BODY,
          'forbidden',
          'scheduled_change_not_found',
          'scheduled_change_not_pending',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) => {
      const held = await scheduledChanges.cancel(principalOf(request), request.params.id, changeContext(request));
      return answered(reply, held ? heldAnswer(held) : { status: 204, payload: null });
    },
  });
};
