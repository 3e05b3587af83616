import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../../errors.js';
import { Component, Ref } from '../../schemas/common.js';
import { problems } from '../../schemas/problems.js';
import { HEALTH_DOCS } from './health-docs.js';

const Status = Component(
  'ProbeStatus',
  Type.Object(
    { status: Type.String({ description: '"ok" (live) or "ready"' }) },
    { description: 'A probe answer', examples: [{ status: 'ok' }] },
  ),
);

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    logLevel: 'warn',
    schema: {
      ...HEALTH_DOCS.getHealth,
      response: { 200: Ref(Status), ...problems('validation_failed') },
    },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/ready', {
    logLevel: 'warn',
    schema: {
      ...HEALTH_DOCS.getReadiness,
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
