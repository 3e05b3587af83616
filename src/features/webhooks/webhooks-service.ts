/**
 * Rules of webhook subscriptions (docs/webhooks.md): customer callers with
 * write access manage their customer's subscriptions, at most 20; a URL must
 * pass the URL policy; the secret is written once and never answered, logged
 * or audited; a new secret signs beside the old one for 24 hours. Test events
 * (limited per customer per minute) and retries are written through the unit
 * of work, and the delivery worker takes them from there.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import type { PerMinuteLimit } from '../../lib/per-minute-limit.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import { checkUrl, type UrlPolicy, UrlRefusedError } from './webhook-url-policy.js';
import type { DeliveryRow, DeliveryStatus, SubscriptionRow, SubscriptionStatus, WebhooksDal } from './webhooks-dal.js';

export const MAX_WEBHOOKS_PER_CUSTOMER = 20;
/** How long the previous secret keeps signing after a new one is set. */
export const SECRET_OVERLAP_SECONDS = 86_400;
/** The channel that wakes the delivery workers (the outbox's trigger sends it too, migration 0013). */
export const WEBHOOKS_CHANNEL = 'feegate_webhooks';

export interface CreateWebhookRequest {
  notification_url: string;
  notification_type: string[];
  secret_key: string;
}

export interface UpdateWebhookRequest {
  notification_url?: string | undefined;
  notification_type?: string[] | undefined;
  status?: SubscriptionStatus | undefined;
  secret_key?: string | undefined;
}

export interface WebhookResource {
  id: string;
  notification_url: string;
  notification_type: string[];
  status: SubscriptionStatus;
  create_date: string;
  update_date: string;
}

export interface DeliveryResource {
  id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  create_date: string;
}

export interface WebhooksDals {
  webhooks: WebhooksDal;
}

function toResource(row: SubscriptionRow): WebhookResource {
  return {
    id: row.id,
    notification_url: row.notificationUrl,
    notification_type: row.notificationTypes,
    status: row.status,
    create_date: row.createdAt.toISOString(),
    update_date: row.updatedAt.toISOString(),
  };
}

export function toDeliveryResource(row: DeliveryRow): DeliveryResource {
  return {
    id: row.id,
    event_id: row.eventId,
    event_type: row.eventType,
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    next_attempt_at: row.status === 'PENDING' ? row.nextAttemptAt.toISOString() : null,
    create_date: row.createdAt.toISOString(),
  };
}

const notFound = () => new NotFoundError('webhook_not_found');

export function createWebhooksService(deps: {
  uow: UnitOfWork<WebhooksDals>;
  dal: Pick<WebhooksDal, 'find' | 'list' | 'listDeliveries' | 'listEnabledIds'>;
  policy: UrlPolicy;
  /**
   * Test sends per customer per minute (WEBHOOK_TEST_SENDS_PER_CUSTOMER_PER_MINUTE): one mock payment
   * notification queues an event for each of up to 20 subscriptions, so a loop of them would fill the queue.
   */
  testSends: Pick<PerMinuteLimit, 'take'>;
}) {
  const { uow, dal, policy, testSends } = deps;

  /** Subscriptions are the customer's: merchant callers may not use them. */
  function assertMayManage(principal: Principal): void {
    if (isMerchantCaller(principal))
      throw new ForbiddenError(
        'forbidden',
        "Merchant callers may not manage webhooks; a customer caller manages its customer's.",
      );
  }

  /** The URL policy's refusal as the 400 a caller reads. */
  function assertUrl(url: string): void {
    try {
      checkUrl(url, policy);
    } catch (err) {
      if (!(err instanceof UrlRefusedError)) throw err;
      throw new BadRequestError('webhook_url_not_allowed', `notification_url ${err.message}.`, [
        { field: 'notification_url', message: err.message },
      ]);
    }
  }

  async function visible(principal: Principal, id: string): Promise<SubscriptionRow> {
    assertMayManage(principal);
    const row = await dal.find(id, principal.customerId);
    if (!row) throw notFound();
    return row;
  }

  /** One WEBHOOK_TEST event per subscription, in one transaction. */
  async function sendTests(
    customerId: string,
    webhookIds: string[],
    message: string,
    context: ChangeContext,
  ): Promise<{ event_ids: string[] }> {
    return uow.write(context, async ({ emitAll }) => ({
      event_ids: await emitAll(
        webhookIds.map((webhookId) => ({
          type: 'WEBHOOK_TEST' as const,
          customerId,
          data: { webhook_id: webhookId, message },
        })),
      ),
    }));
  }

  return {
    assertMayManage,

    async create(principal: Principal, request: CreateWebhookRequest, context: ChangeContext) {
      assertMayManage(principal);
      assertUrl(request.notification_url);
      return uow.write(context, async ({ dal: { webhooks }, audit }) => {
        await webhooks.lockCustomer(principal.customerId);
        if ((await webhooks.countForCustomer(principal.customerId)) >= MAX_WEBHOOKS_PER_CUSTOMER)
          throw new ConflictError('webhook_limit_reached');
        const row = await webhooks.insert({
          customerId: principal.customerId,
          notificationUrl: request.notification_url,
          notificationTypes: [...new Set(request.notification_type)],
          secret: request.secret_key,
        });
        await audit({
          action: 'webhook.created',
          customerId: principal.customerId,
          targetType: 'webhook',
          targetId: row.id,
          details: { notification_url: row.notificationUrl, notification_type: row.notificationTypes },
        });
        return toResource(row);
      });
    },

    async list(principal: Principal, page: PageRequest): Promise<Page<WebhookResource>> {
      assertMayManage(principal);
      const { rows, total } = await dal.list(principal.customerId, page);
      return toPage(rows.map(toResource), total, page);
    },

    async get(principal: Principal, id: string): Promise<WebhookResource> {
      return toResource(await visible(principal, id));
    },

    async update(principal: Principal, id: string, request: UpdateWebhookRequest, context: ChangeContext) {
      assertMayManage(principal);
      if (request.notification_url !== undefined) assertUrl(request.notification_url);
      return uow.write(context, async ({ dal: { webhooks }, audit }) => {
        if (!(await webhooks.find(id, principal.customerId, true))) throw notFound();
        const row = await webhooks.update(id, {
          notificationUrl: request.notification_url,
          notificationTypes: request.notification_type && [...new Set(request.notification_type)],
          status: request.status,
          secret: request.secret_key,
          previousSecretSeconds: SECRET_OVERLAP_SECONDS,
        });
        const { secret_key, ...changed } = request;
        await audit({
          action: 'webhook.updated',
          customerId: principal.customerId,
          targetType: 'webhook',
          targetId: id,
          // The secret never enters the trail: only that it changed.
          details: { ...changed, ...(secret_key === undefined ? {} : { secret_key_changed: true }) },
        });
        return toResource(row);
      });
    },

    async remove(principal: Principal, id: string, context: ChangeContext): Promise<void> {
      assertMayManage(principal);
      await uow.write(context, async ({ dal: { webhooks }, audit }) => {
        const row = await webhooks.find(id, principal.customerId, true);
        if (!row) throw notFound();
        await webhooks.remove(id);
        await audit({
          action: 'webhook.deleted',
          customerId: principal.customerId,
          targetType: 'webhook',
          targetId: id,
          details: { notification_url: row.notificationUrl },
        });
      });
    },

    async listDeliveries(
      principal: Principal,
      id: string,
      request: PageRequest & { status?: DeliveryStatus | undefined },
    ): Promise<Page<DeliveryResource>> {
      await visible(principal, id);
      const { rows, total } = await dal.listDeliveries(id, request.status, request);
      return toPage(rows.map(toDeliveryResource), total, request);
    },

    /** A new attempt now; while one is under way, that attempt is the new one. */
    async retry(principal: Principal, id: string, deliveryId: string, context: ChangeContext) {
      assertMayManage(principal);
      return uow.write(context, async ({ dal: { webhooks }, audit, notify }) => {
        if (!(await webhooks.find(id, principal.customerId))) throw notFound();
        const row = await webhooks.retryNow(id, deliveryId);
        if (!row) throw new NotFoundError('webhook_delivery_not_found');
        await audit({
          action: 'webhook.delivery_retried',
          customerId: principal.customerId,
          targetType: 'webhook',
          targetId: id,
          details: { delivery_id: deliveryId, event_id: row.eventId },
        });
        await notify({ channel: WEBHOOKS_CHANNEL, payload: '' });
        return toDeliveryResource(row);
      });
    },

    /** POST /v1/webhooks/{id}/test: a WEBHOOK_TEST event to this subscription, whatever its status and types. */
    async sendTest(principal: Principal, id: string, context: ChangeContext) {
      await visible(principal, id);
      await testSends.take(principal.customerId);
      return sendTests(principal.customerId, [id], 'A test event, sent on request.', context);
    },

    /** The platform's mock payment notification: a WEBHOOK_TEST event to every ENABLED subscription. */
    async sendMockPaymentNotification(principal: Principal, context: ChangeContext) {
      assertMayManage(principal);
      await testSends.take(principal.customerId);
      const ids = await dal.listEnabledIds(principal.customerId);
      return sendTests(principal.customerId, ids, 'A mock payment notification.', context);
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
