/** What the OpenAPI document says of the webhook operations; their HTTP is in webhooks-routes.ts. */
import { operationDocs } from '../../schemas/common.js';
import type { TSchema } from '@sinclair/typebox';
import { EVENT_MAP } from '../events/event-map.js';

const CALLERS =
  ' Customer callers only (a token or a customer key; a read_only key only reads): merchant callers get 403 `forbidden`.';
const TEST_SEND_LIMIT =
  'Test sends, this one and the mock payment notification together, are limited per customer per minute (WEBHOOK_TEST_SENDS_PER_CUSTOMER_PER_MINUTE, default 10): beyond it 429 `rate_limited` with Retry-After, and nothing is sent.';
const ANOTHER_CUSTOMERS =
  " Another customer's subscription answers 404 `webhook_not_found`, as one that does not exist.";

export const WEBHOOKS_DOCS = operationDocs('webhooks', {
  createWebhook: {
    summary: 'Subscribe a URL to events',
    description:
      'Events of the listed types are POSTed to notification_url, signed with secret_key (docs/webhooks.md): headers webhook-id (the event id), webhook-timestamp (Unix seconds) and webhook-signature (`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by the secret\'s UTF-8 bytes). ' +
      'secret_key: 8..256 characters with an upper-case letter and a character that is neither a letter nor a digit; it is never answered, logged or audited. ' +
      'notification_url: https:// (http:// only where the operator set WEBHOOK_ALLOW_HTTP=true), without user name or password, and its host a global unicast address, never one of the IANA special-purpose ranges (loopback, private, link-local, unique-local, multicast, unspecified, IPv4-compatible and IPv4-mapped IPv6, NAT64, 6to4, Teredo, discard-only, documentation...; in any notation: decimal and hex IPv4 forms are read as addresses) nor localhost: else 400 `webhook_url_not_allowed`. ' +
      'Host names are resolved at every delivery, and an attempt whose host resolves to such an address fails without connecting. At most 20 subscriptions per customer (409 `webhook_limit_reached`). Audited as webhook.created.' +
      CALLERS,
  },
  listWebhooks: {
    summary: "List the customer's webhook subscriptions",
    description: `Newest first (create_date, then id). The secrets are never answered.${CALLERS}`,
  },
  getWebhook: {
    summary: 'Read a webhook subscription',
    description: `The subscription without its secret.${CALLERS}${ANOTHER_CUSTOMERS}`,
  },
  updateWebhook: {
    summary: 'Change a webhook subscription',
    description:
      'Any of notification_url (the rules of creation), notification_type, status (ENABLED or DISABLED) and secret_key. A new secret_key signs from now on and the previous one keeps signing beside it for 24 hours (two signatures in webhook-signature, space-separated), so a receiver can switch without missing an event. ' +
      'DISABLED stops deliveries: those pending are marked FAILED (retry them by hand once ENABLED again). ENABLED again forgets past failures. Audited as webhook.updated (a new secret as secret_key_changed, never its value).' +
      CALLERS +
      ANOTHER_CUSTOMERS,
  },
  deleteWebhook: {
    summary: 'Delete a webhook subscription',
    description:
      'The subscription and its deliveries are deleted; pending deliveries are dropped, an attempt under way finishes. 204; a second DELETE answers 404. Audited as webhook.deleted.' +
      CALLERS +
      ANOTHER_CUSTOMERS,
  },
  sendTestEvent: {
    summary: 'Send a test event to a subscription',
    description:
      'A WEBHOOK_TEST event (data: webhook_id, message) is written and delivered to this subscription, whatever its status and notification_type, like any event: signed, retried, listed among its deliveries. 202 with the event id. ' +
      TEST_SEND_LIMIT +
      CALLERS +
      ANOTHER_CUSTOMERS,
  },
  sendMockPaymentNotification: {
    summary: 'Send a test event to every enabled subscription',
    description:
      "The platform's path: a WEBHOOK_TEST event to each ENABLED subscription of the caller's customer (one event each), delivered like any event. 202 with the event ids (none when the customer has no ENABLED subscription). " +
      TEST_SEND_LIMIT +
      CALLERS,
  },
  listWebhookDeliveries: {
    summary: "List a subscription's deliveries",
    description:
      'Each event sent to the subscription, newest first, with its attempts: status PENDING (due, waiting for a retry, or under way), SUCCEEDED (a 2xx within 10 s) or FAILED (after the last retry: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each ±20%). last_status_code and last_error say how the last attempt went. Filter by status.' +
      CALLERS +
      ANOTHER_CUSTOMERS,
  },
  retryWebhookDelivery: {
    summary: 'Attempt a delivery again now',
    description:
      'The delivery becomes PENDING and due now, whatever its status (a FAILED one gets one more attempt; a retry schedule does not restart). While an attempt is under way, that attempt is the new one. 202 with the delivery. Audited as webhook.delivery_retried.' +
      CALLERS +
      ANOTHER_CUSTOMERS,
  },
});

const SIGNATURE_HEADERS = [
  ['webhook-id', 'The event id: the same on every attempt; deduplicate by it'],
  ['webhook-timestamp', 'Unix seconds of the attempt; refuse one far from your clock (replays)'],
  [
    'webhook-signature',
    'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed by the secret_key\'s UTF-8 bytes>; two, space-separated, for 24 h after the secret changed',
  ],
] as const;

/** A named schema (a component) by reference, any other as it is. */
const documented = (schema: TSchema) => (schema.$id ? { $ref: `#/components/schemas/${schema.$id}` } : schema);

/** The body of an event of `type`: the envelope every event shares, its `data` that type's schema. */
function eventBodySchema(type: keyof typeof EVENT_MAP, data: TSchema): Record<string, unknown> {
  return {
    allOf: [
      { $ref: '#/components/schemas/WebhookEvent' },
      { type: 'object', properties: { type: { const: type }, data: documented(data) } },
    ],
  };
}

/**
 * The OpenAPI 3.1 `webhooks` section: one POST per event type of the map of
 * events (src/features/events/event-map.ts), each with its body and the
 * Standard Webhooks headers.
 */
export function webhookEventsDocument(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(EVENT_MAP).map(([type, { data, about }]) => [
      type,
      {
        post: {
          operationId: `on${type
            .toLowerCase()
            .split('_')
            .map((w) => w[0]!.toUpperCase() + w.slice(1))
            .join('')}`,
          tags: ['webhooks'],
          summary: `${type} event`,
          description: `POSTed to each ENABLED subscription whose notification_type lists ${type}. data: ${about} At least once: any answer but a 2xx within 10 s is retried (about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), redirects are not followed.`,
          security: [],
          parameters: SIGNATURE_HEADERS.map(([name, description]) => ({
            name,
            in: 'header',
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: eventBodySchema(type as keyof typeof EVENT_MAP, data) } },
          },
          responses: {
            '200': { description: 'Received (any 2xx)' },
            '400': { description: 'Refused (a bad signature, say): retried like any failure, then FAILED' },
          },
        },
      },
    ]),
  );
}
