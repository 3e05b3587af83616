/**
 * Bulk assignment of payment plans to merchants
 * (docs/api.md#payment-plans-and-fee-rules): checks that every id is the
 * caller's and that the plans do not conflict, then applies the replacement
 * rule and its audit record in one transaction, all or nothing. Over time
 * (docs/fee-rules-history.md): the same checks then a dry run that writes
 * nothing, and the plans a merchant held at any instant.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadRequestError, ForbiddenError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { parseInstant } from '../../lib/instant.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import type { MerchantsService } from '../merchants/merchants-service.js';
import { type PaymentPlanResource, planWith } from './payment-plans-service.js';
import { checkAssignment, distinctIds, type FeeRulesDals } from './assignment-checks.js';
import type { AssignmentLimit } from './assignment-limit.js';
import type { CustomerLocks } from '../../db/customer-locks.js';
import type { HeldPlanRow } from './fee-rule-history-dal.js';
import type { ReplacementPreview } from './fee-rules-dal.js';
import type { FeeRuleTimelines } from './fee-rule-timelines.js';
import { heldIn, type PlansInForce } from './plans-in-force.js';
import {
  parseEffectiveAt,
  type ScheduledChangeResource,
  type ScheduledChangesService,
} from './scheduled-changes-service.js';

export const ASSIGN_ALL_PATH = '/v1/fee-rules/bulk-assign/all';

export type { FeeRulesDals } from './assignment-checks.js';

export interface FeeRulesServiceDeps {
  uow: UnitOfWork<FeeRulesDals>;
  plansInForce: PlansInForce;
  merchants: MerchantsService;
  assignmentLimit: AssignmentLimit;
  customerLocks: CustomerLocks<FeeRulesDals>;
  scheduled: ScheduledChangesService;
  timelines: Pick<FeeRuleTimelines, 'changed'>;
}

/** The body of every assignment: the plans, and optionally the instant it takes effect. */
type PlansRequest = { payment_plan_ids: string[]; effective_at?: string | undefined };
type AssignmentRequest = PlansRequest & { merchant_ids: string[] };

/** What an assignment did when it ran now (answered 201 without a body), or the change it scheduled (202). */
export type AssignmentAnswer = { applied: ReplacementPreview } | { scheduled_change: ScheduledChangeResource };

/** POST ...?dry_run=true: what the assignment would change. */
export interface DryRunResource {
  dry_run: true;
  merchants: number;
  merchants_changed: number;
  assignments_added: number;
  assignments_removed: number;
  changes: Array<{ merchant_id: string; added: string[]; removed: string[] }>;
}

/** GET /v1/merchants/{id}/fee-rules: the plans a merchant held at an instant. */
export interface FeeRulesAtResource {
  merchant_id: string;
  at: string;
  data: Array<Omit<PaymentPlanResource, 'is_selected'> & { assigned_at: string }>;
}

/** What changed, in the shape of a dry run's answer (dry_run aside): the FEE_RULES_ASSIGNED event's data. */
function effectOf(effect: ReplacementPreview): Omit<DryRunResource, 'dry_run'> {
  return {
    merchants: effect.merchants,
    merchants_changed: effect.merchantsChanged,
    assignments_added: effect.added,
    assignments_removed: effect.removed,
    changes: effect.changes,
  };
}

export function createFeeRulesService(deps: FeeRulesServiceDeps) {
  const { uow, plansInForce, merchants, assignmentLimit, customerLocks, scheduled, timelines } = deps;

  /** An assignment now, or scheduled when the request names `effective_at`. */
  async function assign(
    principal: Principal,
    merchantIds: string[] | 'all',
    request: PlansRequest,
    context: ChangeContext,
  ): Promise<AssignmentAnswer> {
    assertMayAssign(principal);
    const { customerId } = principal;
    const planIds = distinctIds(request.payment_plan_ids);
    if (request.effective_at !== undefined) {
      const effectiveAt = parseEffectiveAt(request.effective_at);
      return scheduled.schedule(customerId, merchantIds, planIds, effectiveAt, context);
    }
    // Counted before the lock: a refused request holds no connection and no lock.
    await assignmentLimit.take(customerId);
    // First the lock, then every read: checks and writes see the state left by
    // the assignment that ran before, as if the two had run one after another.
    const applied = await customerLocks.forCustomer(
      customerId,
      context,
      async ({ dal, audit, emit, afterCommit }, found) => {
        await checkAssignment(customerId, found, merchantIds, planIds, dal);
        const result = await dal.feeRules.replacePlans({ customerId, merchantIds }, planIds);
        // Read-your-writes here; other instances learn it from the NOTIFY of migration 0012.
        afterCommit(timelines.changed);
        // A request that changes nothing writes nothing, not even its audit record:
        // the trail records changes (the request itself is in the access log).
        if (result.added === 0 && result.removed === 0) return result;
        await audit({
          action: merchantIds === 'all' ? 'fee_rules.bulk_assign_all' : 'fee_rules.bulk_assign',
          customerId,
          targetType: 'merchants',
          targetId: null,
          details: {
            payment_plan_ids: planIds,
            merchant_count: merchantIds === 'all' ? 'all' : merchantIds.length,
            added: result.added,
            removed: result.removed,
          },
        });
        await emit({
          type: 'FEE_RULES_ASSIGNED',
          customerId,
          data: {
            merchant_ids: merchantIds === 'all' ? null : merchantIds,
            payment_plan_ids: planIds,
            ...effectOf(result),
          },
        });
        return result;
      },
    );
    return { applied };
  }

  /**
   * The dry run: the same checks, then the effect, all in one read-only snapshot.
   * It takes no lock (it writes nothing, so it neither waits for nor delays a
   * running assignment) and records no audit event: it changes nothing.
   */
  async function preview(
    principal: Principal,
    merchantIds: string[] | 'all',
    request: PlansRequest,
  ): Promise<DryRunResource> {
    assertMayAssign(principal);
    // With effective_at, the preview is of the present state, after the same check of the instant.
    if (request.effective_at !== undefined) parseEffectiveAt(request.effective_at);
    const { customerId } = principal;
    const planIds = distinctIds(request.payment_plan_ids);
    const effect = await uow.snapshot(async (dal) => {
      await checkAssignment(customerId, await dal.feeRules.customerExists(customerId), merchantIds, planIds, dal);
      return dal.feeRules.previewReplacement({ customerId, merchantIds }, planIds);
    });
    return { dry_run: true, ...effectOf(effect) };
  }

  /** The merchant of a path, as PostgreSQL prints its id; one the caller may not see is a 404. */
  async function visibleMerchant(principal: Principal, merchantId: string): Promise<string> {
    // With an id asked for, resolveMerchant answers that id or throws.
    return (await merchants.resolveMerchant(principal, merchantId)) as string;
  }

  /**
   * An instant up to now, from the merchant's timeline (plans-in-force.ts). A
   * merchant caller is checked first (without the database) since it may see
   * only itself; for a customer caller a timeline held proves it may see it.
   */
  async function heldAt(principal: Principal, merchantId: string, at: string): Promise<HeldPlanRow[]> {
    if (isMerchantCaller(principal)) await visibleMerchant(principal, merchantId);
    const timeline = await plansInForce.timeline(principal.customerId, merchantId, () =>
      visibleMerchant(principal, merchantId),
    );
    return heldIn(timeline, at);
  }

  /** Assignment is a customer's decision: merchant callers only read their plans. */
  function assertMayAssign(principal: Principal): void {
    if (isMerchantCaller(principal))
      throw new ForbiddenError(
        'forbidden',
        'Merchant callers may not assign payment plans; a customer caller assigns them.',
      );
  }

  /**
   * POST /v1/fee-rules/bulk-assign names its merchants: a body without them, or
   * with none, is a 400 pointing to /all. Its route calls this before the schema
   * (which states the same rule as required, minItems 1), so the caller gets
   * this code rather than a generic validation_failed.
   */
  function assertMerchantsNamed(body: unknown): void {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return; // the schema refuses it
    const merchantIds = (body as { merchant_ids?: unknown }).merchant_ids;
    if (merchantIds === undefined || (Array.isArray(merchantIds) && merchantIds.length === 0)) {
      throw new BadRequestError(
        'merchant_ids_required',
        `merchant_ids must name at least one merchant. To assign the plans to every merchant, use POST ${ASSIGN_ALL_PATH}.`,
        [{ field: 'merchant_ids', message: `is required and not empty; for every merchant use ${ASSIGN_ALL_PATH}` }],
      );
    }
  }

  /** The named merchants of POST /v1/fee-rules/bulk-assign, each once. */
  function namedMerchants(principal: Principal, request: AssignmentRequest): string[] {
    assertMayAssign(principal);
    assertMerchantsNamed(request);
    return distinctIds(request.merchant_ids);
  }

  return {
    assertMayAssign,
    assertMerchantsNamed,

    /** POST /v1/fee-rules/bulk-assign: the named merchants. */
    async assignToMerchants(
      principal: Principal,
      request: AssignmentRequest,
      context: ChangeContext,
    ): Promise<AssignmentAnswer> {
      return assign(principal, namedMerchants(principal, request), request, context);
    },

    /** POST /v1/fee-rules/bulk-assign/all: every merchant the customer has when the assignment runs. */
    async assignToAllMerchants(
      principal: Principal,
      request: PlansRequest,
      context: ChangeContext,
    ): Promise<AssignmentAnswer> {
      return assign(principal, 'all', request, context);
    },

    /** POST /v1/merchants/{id}/fee-rules: one merchant; one the caller may not see is a 404. */
    async assignToMerchant(
      principal: Principal,
      merchantId: string,
      request: PlansRequest,
      context: ChangeContext,
    ): Promise<AssignmentAnswer> {
      return assign(principal, [await visibleMerchant(principal, merchantId)], request, context);
    },

    /** POST /v1/fee-rules/bulk-assign?dry_run=true */
    async previewForMerchants(principal: Principal, request: AssignmentRequest): Promise<DryRunResource> {
      return preview(principal, namedMerchants(principal, request), request);
    },

    /** POST /v1/fee-rules/bulk-assign/all?dry_run=true */
    async previewForAllMerchants(principal: Principal, request: PlansRequest): Promise<DryRunResource> {
      return preview(principal, 'all', request);
    },

    /** POST /v1/merchants/{id}/fee-rules?dry_run=true */
    async previewForMerchant(principal: Principal, merchantId: string, request: PlansRequest): Promise<DryRunResource> {
      assertMayAssign(principal);
      return preview(principal, [await visibleMerchant(principal, merchantId)], request);
    },

    /**
     * GET /v1/merchants/{id}/fee-rules?at=: the plans the merchant held at `at`
     * (default now). A merchant the caller may not see is a 404.
     */
    async rulesAt(principal: Principal, merchantId: string, atText: string | undefined): Promise<FeeRulesAtResource> {
      const now = new Date();
      const at = atText === undefined ? now : parseInstant('at', atText);
      const rows =
        at > now
          ? await plansInForce.projected(principal.customerId, await visibleMerchant(principal, merchantId), at, now)
          : await heldAt(principal, merchantId, at.toISOString());
      return {
        merchant_id: merchantId,
        at: at.toISOString(),
        data: rows.map((p) => planWith(p, { assigned_at: p.assignedAt })),
      };
    },
  };
}

export type FeeRulesService = ReturnType<typeof createFeeRulesService>;
