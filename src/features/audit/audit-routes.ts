/** HTTP only: translate audit trail requests to the audit service. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../plugins/authentication.js';
import { Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, problems } from '../../schemas/problems.js';
import { AuditEvent, AuditEventListing, AuditEventListQuery, AuditExportQuery } from './audit-schemas.js';
import { AUDIT_EXPORT_CONTENT, auditExportStream, EXPORT_MEDIA_TYPES } from './audit-export-text.js';
import type { AuditEventResource } from './audit-service.js';
import { AUDIT_DOCS } from './audit-docs.js';

export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { audit } = app.services;

  app.get('/v1/audit-events', {
    config: { permission: 'audit:read' },
    onRequest: app.authenticate,
    // Before query validation: a merchant caller gets its 403 whatever it asked.
    preValidation: async (request: FastifyRequest) => audit.assertMayRead(principalOf(request)),
    schema: {
      ...AUDIT_DOCS.listAuditEvents,
      security: SECURITY_ANY,
      querystring: AuditEventListQuery,
      response: {
        200: Ref(AuditEventListing),
        ...problems(...AUTHENTICATED, 'invalid_time_range', 'forbidden', ...ALWAYS),
      },
    },
    handler: async (request) => audit.list(principalOf(request), request.query),
  });

  app.get('/v1/audit-events/export', {
    config: { permission: 'audit:read' },
    onRequest: app.authenticate,
    preValidation: async (request: FastifyRequest) => audit.assertMayRead(principalOf(request)),
    schema: {
      ...AUDIT_DOCS.exportAuditEvents,
      security: SECURITY_ANY,
      querystring: AuditExportQuery,
      response: {
        200: AUDIT_EXPORT_CONTENT,
        ...problems(...AUTHENTICATED, 'invalid_time_range', 'forbidden', ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      const auditExport = audit.exportRange(principalOf(request), request.query);
      const serialize = reply.compileSerializationSchema(Ref(AuditEvent)) as unknown as (
        e: AuditEventResource,
      ) => string;
      // The 200 schema documents the text the stream writes; Fastify sends a stream unserialised.
      const text = auditExportStream(auditExport, serialize) as never;
      return reply.type(EXPORT_MEDIA_TYPES[auditExport.format]).send(text);
    },
  });
};
