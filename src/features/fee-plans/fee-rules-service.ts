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
import { type DryRunResource, dryRun, effectOf } from './dry-run.js';
import type { FeeRuleTimelines } from './fee-rule-timelines.js';
import { heldIn, type PlansInForce } from './plans-in-force.js';
import { type AskedChange, approvable, type Held } from './fee-change-requests.js';

export type { DryRunResource } from './dry-run.js';
import {
  parseEffectiveAt,
  type ScheduledChangeResource,
  type ScheduledChangesService,
} from './scheduled-changes-service.js';

const ASSIGN_PATH = '/v1/fee-rules/bulk-assign';
export const ASSIGN_ALL_PATH = `${ASSIGN_PATH}/all`;

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

/**
 * What an assignment did when it ran now (answered 201 without a body), the
 * change it scheduled (202), or the change request that holds it for approval (202).
 */
export type AssignmentAnswer = { applied: ReplacementPreview } | { scheduled_change: ScheduledChangeResource } | Held;

/** GET /v1/merchants/{id}/fee-rules: the plans a merchant held at an instant. */
export interface FeeRulesAtResource {
  merchant_id: string;
  at: string;
  data: Array<Omit<PaymentPlanResource, 'is_selected'> & { assigned_at: string }>;
}

/** What a held assignment's request was: the route's operation, path and body. */
const askedAssignment = (
  operation: AskedChange['operation'],
  path: string,
  subjectId: string | null,
  body: unknown,
): AskedChange => ({ operation, method: 'POST', path, subjectId, body });

export function createFeeRulesService(deps: FeeRulesServiceDeps) {
  const { uow, plansInForce, merchants, assignmentLimit, customerLocks, scheduled, timelines } = deps;

  /**
   * An assignment now, or scheduled when the request names `effective_at`; under
   * a policy of approval, after the same checks, held as a change request.
   */
  async function assign(
    principal: Principal,
    merchantIds: string[] | 'all',
    request: PlansRequest,
    context: ChangeContext,
    asked: AskedChange,
  ): Promise<AssignmentAnswer> {
    assertMayAssign(principal);
    const { customerId } = principal;
    const planIds = distinctIds(request.payment_plan_ids);
    if (request.effective_at !== undefined) {
      const effectiveAt = parseEffectiveAt(request.effective_at);
      return scheduled.schedule(customerId, merchantIds, planIds, effectiveAt, context, asked);
    }
    // Counted before the lock: a refused request holds no connection and no lock.
    await assignmentLimit.take(customerId);
    // First the lock, then every read: checks and writes see the state left by
    // the assignment that ran before, as if the two had run one after another.
    const answer = await customerLocks.forCustomer(
      customerId,
      context,
      async ({ dal, audit, emit, afterCommit, holdForApproval }, found): Promise<AssignmentAnswer> => {
        await checkAssignment(customerId, found, merchantIds, planIds, dal);
        const held = await holdForApproval(
          approvable(customerId, asked, {
            preview: async () => dryRun(await dal.feeRules.previewReplacement({ customerId, merchantIds }, planIds)),
            result: (applied) => effectOf((applied as { applied: ReplacementPreview }).applied),
            // replacePlans answers in the dry run's shape: the approval checks its hash without a dry run first.
            previewOf: (applied) => dryRun((applied as { applied: ReplacementPreview }).applied),
          }),
        );
        if (held) return held;
        const result = await dal.feeRules.replacePlans({ customerId, merchantIds }, planIds);
        // Read-your-writes here; other instances learn it from the NOTIFY of migration 0012.
        afterCommit(timelines.changed);
        // A request that changes nothing writes nothing, not even its audit record:
        // the trail records changes (the request itself is in the access log).
        if (result.added === 0 && result.removed === 0) return { applied: result };
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
        return { applied: result };
      },
    );
    return answer;
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
    return dryRun(effect);
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
      const asked = askedAssignment('fee_rules.bulk_assign', ASSIGN_PATH, null, request);
      return assign(principal, namedMerchants(principal, request), request, context, asked);
    },

    /** POST /v1/fee-rules/bulk-assign/all: every merchant the customer has when the assignment runs. */
    async assignToAllMerchants(
      principal: Principal,
      request: PlansRequest,
      context: ChangeContext,
    ): Promise<AssignmentAnswer> {
      return assign(
        principal,
        'all',
        request,
        context,
        askedAssignment('fee_rules.bulk_assign_all', ASSIGN_ALL_PATH, null, request),
      );
    },

    /** POST /v1/merchants/{id}/fee-rules: one merchant; one the caller may not see is a 404. */
    async assignToMerchant(
      principal: Principal,
      merchantId: string,
      request: PlansRequest,
      context: ChangeContext,
    ): Promise<AssignmentAnswer> {
      const merchant = await visibleMerchant(principal, merchantId);
      const asked = askedAssignment(
        'fee_rules.merchant_assign',
        `/v1/merchants/${merchant}/fee-rules`,
        merchant,
        request,
      );
      return assign(principal, [merchant], request, context, asked);
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
