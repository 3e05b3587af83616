import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ServiceUnavailableError } from '../../errors.js';
import { problems } from '../../schemas/common.js';

const Status = Type.Object({ status: Type.String() });

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    logLevel: 'warn',
    schema: { tags: ['operations'], summary: 'The process is up', response: { 200: Status } },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/ready', {
    logLevel: 'warn',
    schema: {
      tags: ['operations'],
      summary: 'The database answers',
      response: { 200: Status, ...problems(503) },
    },
    handler: async () => {
      try {
        await app.database.ping();
      } catch {
        throw new ServiceUnavailableError('database_unavailable', 'The database does not answer.', 2);
      }
      return { status: 'ready' };
    },
  });
};
