/** HTTP only: translate audit trail requests to the audit service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../plugins/authentication.js';
import { ALWAYS, AUTHENTICATED, Ref, SECURITY_ANY, problems } from '../../schemas/common.js';
import { AuditEventListing, AuditEventListQuery } from './audit-schemas.js';

export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { audit } = app.services;

  app.get('/v1/audit-events', {
    onRequest: app.authenticate,
    // Before query validation: a merchant caller gets its 403 whatever it asked.
    preValidation: async (request: FastifyRequest) => audit.assertMayRead(principalOf(request)),
    schema: {
      tags: ['audit'],
      operationId: 'listAuditEvents',
      summary: "List the audit trail of the caller's customer",
      description:
        "Every change made for the caller's customer (API keys created and deleted, bulk assignments, logouts), newest first (create_date, then id). " +
        'Filters: action (exact), from (inclusive) and to (exclusive). Records are written in the transaction of their change and are never edited. ' +
        'Errors: 400 `validation_failed` (a bad page, size or instant, or an unknown query parameter) or `invalid_time_range` (from after to); 403 `forbidden` for merchant callers.',
      security: SECURITY_ANY,
      querystring: AuditEventListQuery,
      response: { 200: Ref(AuditEventListing), ...problems(...AUTHENTICATED, 'invalid_time_range', 'forbidden', ...ALWAYS) },
    },
    handler: async (request) => audit.list(principalOf(request), request.query),
  });
};
