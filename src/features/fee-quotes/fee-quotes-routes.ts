/** HTTP only: translate fee quote requests, JSON or an NDJSON stream, to the fee quotes service. */
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../plugins/authentication.js';
import { Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, WITH_BODY, problems } from '../../schemas/problems.js';
import { FEE_QUOTES_DOCS } from './fee-quotes-docs.js';
import { QuoteAnswer, QuoteLines, QuoteLinesAnswer, QuoteRequest } from './fee-quotes-schemas.js';
import { ValidationError } from '../../errors.js';
import type { QuoteRequestInput } from './fee-quotes-service.js';

const NDJSON = 'application/x-ndjson';

const isNdjson = (request: FastifyRequest) =>
  (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === NDJSON;

export const feeQuotesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { feeQuotes } = app.services;
  // Handed through unread (this plugin's routes only): the service reads it line by line as it answers.
  app.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));

  app.post('/v1/fee-quotes', {
    onRequest: app.authenticate,
    config: { permission: 'fee_rules:read', changesNothing: true },
    schema: {
      ...FEE_QUOTES_DOCS.createFeeQuotes,
      security: SECURITY_ANY,
      body: {
        content: {
          'application/json': { schema: Ref(QuoteRequest) },
          [NDJSON]: { schema: Ref(QuoteLines) },
        },
      },
      response: {
        200: {
          description: 'The quotes, in the order of the transactions',
          content: { 'application/json': { schema: Ref(QuoteAnswer) }, [NDJSON]: { schema: Ref(QuoteLinesAnswer) } },
        },
        ...problems(...WITH_BODY, ...AUTHENTICATED, ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      const principal = principalOf(request);
      // The validator checks a body by its media type: without one, nothing was checked.
      if (request.body === undefined || request.body === null)
        throw new ValidationError([{ field: 'body', message: 'is required' }], 'The body is not valid.');
      // The answer comes as its JSON text (quote-pricing.ts quoteText), sent as it is.
      if (!isNdjson(request))
        return reply
          .type('application/json; charset=utf-8')
          .send(await feeQuotes.quote(principal, request.body as QuoteRequestInput));
      const lines = feeQuotes.quoteLines(principal, request.body as Readable);
      return reply.type(NDJSON).send(Readable.from(lines, { objectMode: false }));
    },
  });
};
