import { Type } from '@sinclair/typebox';
import { Component, Listing, Nullable, PageQuery, Pattern, Text, Timestamp, Uuid } from '../../schemas/common.js';
import { EVENT_TYPES } from '../events/event-map.js';

/** The platform's own operation events: accepted in a subscription, never sent by feegate (it creates no operations). */
const PLATFORM_EVENT_TYPES = ['OPERATION_CREATED', 'TAXED_OPERATION_CREATED'] as const;
export const NOTIFICATION_TYPES = [...EVENT_TYPES, ...PLATFORM_EVENT_TYPES] as const;

export const MAX_URL_LENGTH = 2048;

const NotificationUrl = Text({
  format: 'uri',
  maxLength: MAX_URL_LENGTH,
  examples: ['https://hooks.example.com/feegate'],
  description:
    'Where events are POSTed: an https:// URL (http:// only where the operator set WEBHOOK_ALLOW_HTTP=true) whose host is public; at most 2048 characters',
});
const NotificationType = Type.Union(
  NOTIFICATION_TYPES.map((t) => Type.Literal(t)),
  { description: 'An event type, upper case as the platform writes it' },
);
const NotificationTypes = Type.Array(NotificationType, {
  minItems: 1,
  maxItems: NOTIFICATION_TYPES.length,
  description:
    'The event types to send (a type listed twice counts once); WEBHOOK_TEST events are sent whatever is listed',
});
/**
 * The platform's secret rule: at least 8 characters, an upper-case letter and a
 * character that is neither a letter nor a digit (and the text rule of every field).
 */
const SecretKey = Type.String({
  minLength: 8,
  maxLength: 256,
  pattern: Pattern(
    '^(?=.*\\p{Lu})(?=.*[^\\p{L}\\p{N}])[^\\u0000\\uD800-\\uDFFF]*$',
    'must have an upper-case letter and a character that is neither a letter nor a digit (and no U+0000)',
  ),
  description:
    'Signs every delivery (HMAC-SHA256 keyed by its UTF-8 bytes): 8..256 characters with at least one upper-case letter and one character that is neither a letter nor a digit. Never answered again',
  examples: ['Whsec-Alpha-2026'],
});
const SubscriptionStatus = Type.Union([Type.Literal('ENABLED'), Type.Literal('DISABLED')], {
  description: 'DISABLED: no events are sent (set by PATCH, or after 5 days in which every delivery failed)',
});

const WEBHOOK_ID = '9b2e4c6a-1d3f-4a5b-8c7d-0e1f2a3b4c5d';
const WEBHOOK_EXAMPLE = {
  id: WEBHOOK_ID,
  notification_url: 'https://hooks.example.com/feegate',
  notification_type: ['API_KEY_REVOKED', 'API_KEY_EXPIRING'],
  status: 'ENABLED',
  create_date: '2026-11-24T02:00:00.000Z',
  update_date: '2026-11-24T02:00:00.000Z',
};

export const CreateWebhookBody = Component(
  'CreateWebhookRequest',
  Type.Object(
    { notification_url: NotificationUrl, notification_type: NotificationTypes, secret_key: SecretKey },
    {
      additionalProperties: false,
      description: 'A subscription: where to send which events, and the secret that signs them',
      examples: [
        {
          notification_url: 'https://hooks.example.com/feegate',
          notification_type: ['API_KEY_REVOKED', 'API_KEY_EXPIRING'],
          secret_key: 'Whsec-Alpha-2026',
        },
      ],
    },
  ),
);

export const UpdateWebhookBody = Component(
  'UpdateWebhookRequest',
  Type.Object(
    {
      notification_url: Type.Optional(NotificationUrl),
      notification_type: Type.Optional(NotificationTypes),
      status: Type.Optional(SubscriptionStatus),
      secret_key: Type.Optional({
        ...SecretKey,
        description: `${SecretKey.description}. The previous secret keeps signing beside it for 24 hours`,
      }),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description: 'The fields to change; at least one',
      examples: [{ status: 'DISABLED', notification_type: ['API_KEY_REVOKED'] }],
    },
  ),
);

export const Webhook = Component(
  'Webhook',
  Type.Object(
    {
      id: Uuid,
      notification_url: Type.String({ format: 'uri' }),
      notification_type: Type.Array(Type.String()),
      status: SubscriptionStatus,
      create_date: Timestamp,
      update_date: Timestamp,
    },
    { description: 'A webhook subscription; its secret is never answered', examples: [WEBHOOK_EXAMPLE] },
  ),
);

export const WebhookListing = Listing(Webhook, 'WebhookListing', {
  description: 'A page of subscriptions, newest first',
  examples: [{ data: [WEBHOOK_EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

const DeliveryStatus = Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED')], {
  description:
    'PENDING: an attempt is due or under way; FAILED: every attempt failed (or the subscription was disabled)',
});

const DELIVERY_EXAMPLE = {
  id: '4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
  event_id: '7e8f9a0b-1c2d-4e3f-9a4b-5c6d7e8f9a0b',
  event_type: 'API_KEY_REVOKED',
  status: 'PENDING',
  attempts: 2,
  last_attempt_at: '2026-11-24T02:00:05.120Z',
  last_status_code: 500,
  last_error: 'the receiver answered 500',
  next_attempt_at: '2026-11-24T02:05:06.000Z',
  create_date: '2026-11-24T02:00:00.000Z',
};

export const WebhookDelivery = Component(
  'WebhookDelivery',
  Type.Object(
    {
      id: Uuid,
      event_id: { ...Uuid, description: 'The event: the webhook-id header, by which receivers deduplicate' },
      event_type: Type.String(),
      status: DeliveryStatus,
      attempts: Type.Integer({ minimum: 0 }),
      last_attempt_at: Nullable(Timestamp),
      last_status_code: Nullable(Type.Integer(), 'The HTTP status of the last answer; null: none came'),
      last_error: Nullable(Type.String(), 'Why the last attempt failed; null when it succeeded or none was made'),
      next_attempt_at: Nullable(Timestamp, 'When the next attempt is due; null unless PENDING'),
      create_date: Timestamp,
    },
    { description: 'One event sent to one subscription, with its attempts', examples: [DELIVERY_EXAMPLE] },
  ),
);

export const WebhookDeliveryListing = Listing(WebhookDelivery, 'WebhookDeliveryListing', {
  description: 'A page of deliveries, newest first',
  examples: [{ data: [DELIVERY_EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});

export const WebhookParams = Type.Object({ id: Uuid });
/** The subscription whose deliveries the document's example lists. */
export const LISTED_WEBHOOK_ID = WEBHOOK_ID;
export const DeliveryListParams = Type.Object({ id: { ...Uuid, examples: [LISTED_WEBHOOK_ID] } });
export const DeliveryParams = Type.Object({ id: Uuid, delivery_id: Uuid });

export const DeliveryListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(DeliveryStatus) },
  { additionalProperties: false },
);
export const WebhookListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const TestEventsSent = Component(
  'WebhookTestEvents',
  Type.Object(
    {
      event_ids: Type.Array(Uuid, {
        description: 'The WEBHOOK_TEST events written, one per subscription; each is delivered at least once',
      }),
    },
    { description: 'Test events accepted for delivery', examples: [{ event_ids: [DELIVERY_EXAMPLE.event_id] }] },
  ),
);

/** The body of every delivery (the `webhooks` section of the document names one per event type). */
export const WebhookEvent = Component(
  'WebhookEvent',
  Type.Object(
    {
      id: { ...Uuid, description: 'The event id, also the webhook-id header: deduplicate by it' },
      type: NotificationType,
      created: Timestamp,
      customer_id: Uuid,
      request_id: Nullable(
        Type.String(),
        'The X-Request-Id of the request that made the change; null for the service itself',
      ),
      data: Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            "The resource as the API answers it (a key masked, never a secret); each type's schema is in the document's webhooks section",
        },
      ),
    },
    {
      description: 'An event, as POSTed to a subscription with the Standard Webhooks headers',
      examples: [
        {
          id: DELIVERY_EXAMPLE.event_id,
          type: 'API_KEY_REVOKED',
          created: '2026-11-24T02:00:00.000Z',
          customer_id: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
          request_id: '5b7e1f0a-8c2d-4e3f-9a1b-6c4d2e8f0a17',
          data: { id: '3f0c2a8e-5b1d-4c6e-9a7f-2d8b4e6c1a90', api_key: 'fgk_****Ab12', status: 'DELETED' },
        },
      ],
    },
  ),
);
