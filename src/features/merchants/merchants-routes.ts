/** HTTP only: translate merchant requests to the merchants service. */
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, WITH_BODY, problems } from '../../schemas/problems.js';
import { merchantListingStream } from './merchant-listing-text.js';
import { MERCHANTS_DOCS } from './merchants-docs.js';
import type { MerchantResource } from './merchants-service.js';
import { Merchant, MerchantListing, MerchantListQuery, MerchantParams } from './merchant-answer-schemas.js';
import { CreateMerchantBody, UpdateMerchantBody } from './merchants-schemas.js';

/** The one-merchant answer's schema: the listing writes each merchant exactly as GET /v1/merchants/{id} does. */
const ONE_MERCHANT = Ref(Merchant);

export const merchantsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { merchants } = app.services;
  // Before body validation: a merchant caller learns nothing about the body it sent.
  const customerCallersOnly = async (request: FastifyRequest) => merchants.assertMayChange(principalOf(request));

  for (const [path, docs] of [
    ['/v1/merchants', MERCHANTS_DOCS.listMerchants],
    ['/v2/merchants', MERCHANTS_DOCS.listMerchantsV2],
  ] as const) {
    app.get(path, {
      config: { permission: 'merchants:read' },
      onRequest: app.authenticate,
      schema: {
        ...docs,
        security: SECURITY_ANY,
        querystring: MerchantListQuery,
        response: { 200: Ref(MerchantListing), ...problems(...AUTHENTICATED, ...ALWAYS) },
      },
      handler: async (request, reply) => {
        // A client that hangs up while its page waits for its turn leaves the queue: the page is never read.
        const hungUp = new AbortController();
        reply.raw.once('close', () => hungUp.abort());
        const listing = await merchants.list(principalOf(request), request.query, hungUp.signal);
        reply.type('application/json; charset=utf-8');
        // HEAD answers the headers alone: the page is never read, so no rows are queried for it.
        if (request.method === 'HEAD') return reply.send(Readable.from([]) as never);
        const serialize = reply.compileSerializationSchema(ONE_MERCHANT) as (m: MerchantResource) => string;
        // The 200 schema documents the text the stream writes; Fastify sends a stream unserialised.
        const text = merchantListingStream(listing, serialize) as never;
        return reply.send(text);
      },
    });
  }

  app.get('/v1/merchants/:id', {
    config: { permission: 'merchants:read' },
    onRequest: app.authenticate,
    schema: {
      ...MERCHANTS_DOCS.getMerchant,
      security: SECURITY_ANY,
      params: MerchantParams,
      response: { 200: Ref(Merchant), ...problems(...AUTHENTICATED, 'merchant_not_found', ...ALWAYS) },
    },
    handler: async (request) => merchants.get(principalOf(request), request.params.id),
  });

  for (const [path, docs] of [
    ['/v1/merchants', MERCHANTS_DOCS.createMerchant],
    ['/v2/merchants', MERCHANTS_DOCS.createMerchantV2],
  ] as const) {
    app.post(path, {
      config: { permission: 'merchants:write' },
      onRequest: app.authenticate,
      preValidation: customerCallersOnly,
      schema: {
        ...docs,
        security: SECURITY_ANY,
        body: Ref(CreateMerchantBody),
        response: {
          201: Ref(Merchant),
          ...problems(
            ...WITH_BODY,
            ...AUTHENTICATED_WRITE,
            'invalid_tax_identification',
            'forbidden',
            'customer_not_found',
            'merchant_code_conflict',
            ...ALWAYS,
          ),
        },
      },
      handler: async (request, reply) => {
        const merchant = await merchants.create(principalOf(request), request.body, changeContext(request));
        return reply.code(201).send(merchant);
      },
    });
  }

  for (const [path, docs] of [
    ['/v1/merchants/:id', MERCHANTS_DOCS.updateMerchant],
    ['/v2/merchants/:id', MERCHANTS_DOCS.updateMerchantV2],
  ] as const) {
    app.patch(path, {
      config: { permission: 'merchants:write' },
      onRequest: app.authenticate,
      preValidation: [
        customerCallersOnly,
        async (request: FastifyRequest) => merchants.assertChangeableFields(request.body),
      ],
      schema: {
        ...docs,
        security: SECURITY_ANY,
        params: MerchantParams,
        body: Ref(UpdateMerchantBody),
        response: {
          200: Ref(Merchant),
          ...problems(
            ...WITH_BODY,
            ...AUTHENTICATED_WRITE,
            'invalid_tax_identification',
            'forbidden',
            'merchant_not_found',
            'merchant_code_conflict',
            'server_busy',
            ...ALWAYS,
          ),
        },
      },
      handler: async (request) =>
        merchants.update(principalOf(request), request.params.id, request.body, changeContext(request)),
    });
  }
};
