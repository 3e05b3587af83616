import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../../errors.js';
import { Component, Ref, problems } from '../../schemas/common.js';

const Status = Component(
  'ProbeStatus',
  Type.Object({ status: Type.String({ description: '"ok" (live) or "ready"' }) }, { description: 'A probe answer', examples: [{ status: 'ok' }] }),
);

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    logLevel: 'warn',
    schema: {
      operationId: 'getHealth',
      tags: ['operations'],
      summary: 'The process is up',
      description: 'Liveness: answers without touching the database. Unknown query parameters are a 400.',
      response: { 200: Ref(Status), ...problems('validation_failed') },
    },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/ready', {
    logLevel: 'warn',
    schema: {
      operationId: 'getReadiness',
      tags: ['operations'],
      summary: 'The database answers',
      description: 'Readiness: 503 `database_unavailable` while the database does not answer. Unknown query parameters are a 400.',
      response: { 200: Ref(Status), ...problems('validation_failed', 'database_unavailable') },
    },
    handler: async () => {
      try {
        await app.database.ping();
      } catch {
        throw new ServiceUnavailableError('database_unavailable', undefined, 2);
      }
      return { status: 'ready' };
    },
  });
};
