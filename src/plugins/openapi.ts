/** The OpenAPI 3.1 document, generated from the same schemas that validate and serialise. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ProblemSchema } from '../schemas/common.js';

export const openapiPlugin = fp(async (app: FastifyInstance) => {
  app.addSchema(ProblemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'feegate',
        version: '1.0.0',
        description:
          'Access and payment-plan administration API: login and tokens, API keys, and bulk assignment of payment plans (fee rules) to merchants. Errors are RFC 9457 problem details (application/problem+json) with a stable `code` and the `request_id`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'access_token from POST /v1/login' },
          apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
});
