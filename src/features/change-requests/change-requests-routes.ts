/** HTTP only: change requests translated to their service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ForbiddenError } from '../../errors.js';
import { isMerchantCaller } from '../../lib/principal.js';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { NoQuery, Ref, SECURITY_ANY, SECURITY_BEARER } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, WITH_BODY, problems } from '../../schemas/problems.js';
import { CHANGE_REQUESTS_DOCS } from './change-requests-docs.js';
import {
  ApproveBody,
  ChangeRequest,
  ChangeRequestDetail,
  ChangeRequestListing,
  ChangeRequestListQuery,
  ChangeRequestParams,
  RejectBody,
} from './change-requests-schemas.js';

export const changeRequestsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { changeRequests } = app.services;
  // Fee changes are a customer's: merchant callers get 403 before their body is read.
  const customerCallersOnly = {
    onRequest: app.authenticate,
    preValidation: async (request: FastifyRequest) => {
      if (isMerchantCaller(principalOf(request)))
        throw new ForbiddenError('forbidden', "Change requests are a customer's; merchant callers have none.");
    },
  };
  const decision = (...own: Parameters<typeof problems>) => ({
    200: Ref(ChangeRequest),
    ...problems(
      ...WITH_BODY,
      ...AUTHENTICATED_WRITE,
      'forbidden',
      ...own,
      'change_request_not_found',
      'change_request_closed',
      ...ALWAYS,
    ),
  });

  app.get('/v1/change-requests', {
    ...customerCallersOnly,
    config: { permission: 'fee_rules:read' },
    schema: {
      ...CHANGE_REQUESTS_DOCS.listChangeRequests,
      security: SECURITY_ANY,
      querystring: ChangeRequestListQuery,
      response: { 200: Ref(ChangeRequestListing), ...problems(...AUTHENTICATED, 'forbidden', ...ALWAYS) },
    },
    handler: async (request) => changeRequests.list(principalOf(request), request.query),
  });

  app.get('/v1/change-requests/:id', {
    ...customerCallersOnly,
    config: { permission: 'fee_rules:read' },
    schema: {
      ...CHANGE_REQUESTS_DOCS.getChangeRequest,
      security: SECURITY_ANY,
      params: ChangeRequestParams,
      querystring: NoQuery,
      response: {
        200: Ref(ChangeRequestDetail),
        ...problems(...AUTHENTICATED, 'forbidden', 'change_request_not_found', ...ALWAYS),
      },
    },
    handler: async (request) => changeRequests.get(principalOf(request), request.params.id),
  });

  app.post('/v1/change-requests/:id/approve', {
    ...customerCallersOnly,
    // No key permission grants it: the service answers a key 403 insufficient_role, as a MEMBER.
    config: { permission: 'none' },
    // Its one field is optional, so the body is too (curl -X POST with no body).
    preValidation: async (request) => {
      await customerCallersOnly.preValidation(request);
      request.body ??= {};
    },
    schema: {
      ...CHANGE_REQUESTS_DOCS.approveChangeRequest,
      security: SECURITY_BEARER,
      params: ChangeRequestParams,
      querystring: NoQuery,
      body: Ref(ApproveBody),
      response: decision('insufficient_role', 'self_approval', 'preview_changed', 'server_busy', 'rate_limited'),
    },
    handler: async (request) =>
      changeRequests.approve(principalOf(request), request.params.id, request.body, changeContext(request)),
  });

  app.post('/v1/change-requests/:id/reject', {
    ...customerCallersOnly,
    config: { permission: 'none' },
    schema: {
      ...CHANGE_REQUESTS_DOCS.rejectChangeRequest,
      security: SECURITY_BEARER,
      params: ChangeRequestParams,
      querystring: NoQuery,
      body: Ref(RejectBody),
      response: decision('insufficient_role', 'self_approval'),
    },
    handler: async (request) =>
      changeRequests.reject(principalOf(request), request.params.id, request.body, changeContext(request)),
  });

  app.post('/v1/change-requests/:id/cancel', {
    ...customerCallersOnly,
    config: { permission: 'fee_rules:write' },
    schema: {
      ...CHANGE_REQUESTS_DOCS.cancelChangeRequest,
      security: SECURITY_ANY,
      params: ChangeRequestParams,
      querystring: NoQuery,
      response: decision('not_requester'),
    },
    handler: async (request) => changeRequests.cancel(principalOf(request), request.params.id, changeContext(request)),
  });
};
