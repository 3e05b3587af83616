/** HTTP only: translate webhook requests to the webhooks service and back. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { changeContext } from '../../lib/request-context.js';
import { principalOf } from '../../plugins/authentication.js';
import { NoContent, Ref, SECURITY_ANY } from '../../schemas/common.js';
import { ALWAYS, AUTHENTICATED, AUTHENTICATED_WRITE, READS_BODY, WITH_BODY, problems } from '../../schemas/problems.js';
import { WEBHOOKS_DOCS } from './webhooks-docs.js';
import {
  CreateWebhookBody,
  DeliveryListParams,
  DeliveryListQuery,
  DeliveryParams,
  TestEventsSent,
  UpdateWebhookBody,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryListing,
  WebhookListing,
  WebhookListQuery,
  WebhookParams,
} from './webhooks-schemas.js';

export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { webhooks } = app.services;
  // Checked before validation: a merchant caller gets its 403 whatever it sent.
  const customerCallers = {
    onRequest: app.authenticate,
    preValidation: async (request: FastifyRequest) => webhooks.assertMayManage(principalOf(request)),
  };

  app.post('/v1/webhooks', {
    config: { permission: 'webhooks:write' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.createWebhook,
      security: SECURITY_ANY,
      body: Ref(CreateWebhookBody),
      response: {
        201: Ref(Webhook),
        ...problems(
          ...WITH_BODY,
          ...AUTHENTICATED_WRITE,
          'webhook_url_not_allowed',
          'forbidden',
          'webhook_limit_reached',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) =>
      reply.code(201).send(await webhooks.create(principalOf(request), request.body, changeContext(request))),
  });

  app.get('/v1/webhooks', {
    config: { permission: 'webhooks:read' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.listWebhooks,
      security: SECURITY_ANY,
      querystring: WebhookListQuery,
      response: { 200: Ref(WebhookListing), ...problems(...AUTHENTICATED, 'forbidden', ...ALWAYS) },
    },
    handler: async (request) => webhooks.list(principalOf(request), request.query),
  });

  app.post('/v1/webhooks/mock/send-payment-notification', {
    config: { permission: 'webhooks:write' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.sendMockPaymentNotification,
      security: SECURITY_ANY,
      response: {
        202: Ref(TestEventsSent),
        ...problems(...AUTHENTICATED_WRITE, ...READS_BODY, 'forbidden', ...ALWAYS),
      },
    },
    handler: async (request, reply) =>
      reply.code(202).send(await webhooks.sendMockPaymentNotification(principalOf(request), changeContext(request))),
  });

  app.get('/v1/webhooks/:id', {
    config: { permission: 'webhooks:read' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.getWebhook,
      security: SECURITY_ANY,
      params: WebhookParams,
      response: { 200: Ref(Webhook), ...problems(...AUTHENTICATED, 'forbidden', 'webhook_not_found', ...ALWAYS) },
    },
    handler: async (request) => webhooks.get(principalOf(request), request.params.id),
  });

  app.patch('/v1/webhooks/:id', {
    config: { permission: 'webhooks:write' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.updateWebhook,
      security: SECURITY_ANY,
      params: WebhookParams,
      body: Ref(UpdateWebhookBody),
      response: {
        200: Ref(Webhook),
        ...problems(
          ...WITH_BODY,
          ...AUTHENTICATED_WRITE,
          'webhook_url_not_allowed',
          'forbidden',
          'webhook_not_found',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request) =>
      webhooks.update(principalOf(request), request.params.id, request.body, changeContext(request)),
  });

  app.delete('/v1/webhooks/:id', {
    config: { permission: 'webhooks:write' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.deleteWebhook,
      security: SECURITY_ANY,
      params: WebhookParams,
      response: {
        204: NoContent,
        ...problems(...AUTHENTICATED_WRITE, ...READS_BODY, 'forbidden', 'webhook_not_found', ...ALWAYS),
      },
    },
    handler: async (request, reply) => {
      await webhooks.remove(principalOf(request), request.params.id, changeContext(request));
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/webhooks/:id/test', {
    config: { permission: 'webhooks:write' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.sendTestEvent,
      security: SECURITY_ANY,
      params: WebhookParams,
      response: {
        202: Ref(TestEventsSent),
        ...problems(...AUTHENTICATED_WRITE, ...READS_BODY, 'forbidden', 'webhook_not_found', ...ALWAYS),
      },
    },
    handler: async (request, reply) =>
      reply.code(202).send(await webhooks.sendTest(principalOf(request), request.params.id, changeContext(request))),
  });

  app.get('/v1/webhooks/:id/deliveries', {
    config: { permission: 'webhooks:read' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.listWebhookDeliveries,
      security: SECURITY_ANY,
      params: DeliveryListParams,
      querystring: DeliveryListQuery,
      response: {
        200: Ref(WebhookDeliveryListing),
        ...problems(...AUTHENTICATED, 'forbidden', 'webhook_not_found', ...ALWAYS),
      },
    },
    handler: async (request) => webhooks.listDeliveries(principalOf(request), request.params.id, request.query),
  });

  app.post('/v1/webhooks/:id/deliveries/:delivery_id/retry', {
    config: { permission: 'webhooks:write' },
    ...customerCallers,
    schema: {
      ...WEBHOOKS_DOCS.retryWebhookDelivery,
      security: SECURITY_ANY,
      params: DeliveryParams,
      response: {
        202: Ref(WebhookDelivery),
        ...problems(
          ...AUTHENTICATED_WRITE,
          ...READS_BODY,
          'forbidden',
          'webhook_not_found',
          'webhook_delivery_not_found',
          ...ALWAYS,
        ),
      },
    },
    handler: async (request, reply) =>
      reply
        .code(202)
        .send(
          await webhooks.retry(
            principalOf(request),
            request.params.id,
            request.params.delivery_id,
            changeContext(request),
          ),
        ),
  });
};
