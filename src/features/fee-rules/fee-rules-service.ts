/**
 * Bulk assignment of payment plans to merchants
 * (docs/api.md#payment-plans-and-fee-rules): checks that every id is the
 * caller's and that the plans do not conflict, then applies the replacement
 * rule and its audit record in one transaction, all or nothing. Over time
 * (docs/fee-rules-history.md): the same checks then a dry run that writes
 * nothing, and the plans a merchant held at any instant.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadRequestError, ForbiddenError, NotFoundError, UnprocessableError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { parseInstant } from '../../lib/instant.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import type { MerchantsDal } from '../merchants/merchants-dal.js';
import type { MerchantsService } from '../merchants/merchants-service.js';
import type { PaymentPlanKind, PaymentPlansDal } from '../payment-plans/payment-plans-dal.js';
import { type PaymentPlanResource, planFields } from '../payment-plans/payment-plans-service.js';
import type { AssignmentLimit } from './assignment-limit.js';
import type { CustomerLocks } from './customer-locks.js';
import type { FeeRulesDal, ReplacementResult } from './fee-rules-dal.js';

export const ASSIGN_ALL_PATH = '/v1/fee-rules/bulk-assign/all';

/** The DALs an assignment reads and writes through, in its unit of work. */
export interface FeeRulesDals {
  feeRules: FeeRulesDal;
  merchants: MerchantsDal;
  paymentPlans: PaymentPlansDal;
}

export interface FeeRulesServiceDeps {
  uow: UnitOfWork<FeeRulesDals>;
  feeRulesDal: FeeRulesDal;
  merchants: MerchantsService;
  assignmentLimit: AssignmentLimit;
  customerLocks: CustomerLocks<FeeRulesDals>;
}

type AssignmentRequest = { merchant_ids: string[]; payment_plan_ids: string[] };

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

/** Ids as PostgreSQL prints them, each once, in the order first sent. */
function distinctIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

/** Groups of sent plans that a merchant could not hold together: same kind and same term. */
function conflictingGroups(plans: PaymentPlanKind[]): string[][] {
  const byKindAndTerm = new Map<string, string[]>();
  for (const p of plans) {
    const key = JSON.stringify([p.cardBrand, p.paymentMethod, p.isInternational, p.hasInstallments, p.term]);
    byKindAndTerm.set(key, [...(byKindAndTerm.get(key) ?? []), p.id]);
  }
  return [...byKindAndTerm.values()].filter((ids) => ids.length > 1);
}

export function createFeeRulesService(deps: FeeRulesServiceDeps) {
  const { uow, feeRulesDal, merchants, assignmentLimit, customerLocks } = deps;

  async function checkPlans(customerId: string, planIds: string[], dal: FeeRulesDals): Promise<void> {
    const found = await dal.paymentPlans.findInCatalogue(customerId, planIds);
    const known = new Set(found.map((p) => p.id));
    const unknown = planIds.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new UnprocessableError('unknown_payment_plans', 'Some payment plans do not exist for this customer.', {
        payment_plan_ids: unknown,
      });
    }
    const conflicts = conflictingGroups(found);
    if (conflicts.length > 0) {
      throw new UnprocessableError(
        'conflicting_payment_plans',
        'Some payment plans share card_brand, payment_method, is_international, has_installments and term: a merchant can hold only one of each.',
        { payment_plan_ids: conflicts.flat(), conflicts: conflicts.map((ids) => ({ payment_plan_ids: ids })) },
      );
    }
  }

  async function checkMerchants(customerId: string, merchantIds: string[], dal: FeeRulesDals): Promise<void> {
    const unknown = await dal.merchants.notOfCustomer(customerId, merchantIds);
    if (unknown.length > 0) {
      throw new UnprocessableError('unknown_merchants', 'Some merchants do not exist for this customer.', {
        merchant_ids: unknown,
      });
    }
    const inactive = await dal.merchants.inactiveAmong(merchantIds);
    if (inactive.length > 0) {
      throw new UnprocessableError('inactive_merchants', 'Some merchants are INACTIVE and get no new payment plans.', {
        merchant_ids: inactive,
      });
    }
  }

  /** What a change and its dry run both check, in one transaction, after `found` told whether the customer exists. */
  async function checkRequest(
    customerId: string,
    found: boolean,
    merchantIds: string[] | 'all',
    planIds: string[],
    dal: FeeRulesDals,
  ): Promise<void> {
    if (!found) throw new NotFoundError('customer_not_found', 'The customer does not exist.');
    await checkPlans(customerId, planIds, dal);
    if (merchantIds !== 'all') await checkMerchants(customerId, merchantIds, dal);
  }

  async function assign(
    principal: Principal,
    merchantIds: string[] | 'all',
    sentPlanIds: string[],
    context: ChangeContext,
  ): Promise<ReplacementResult> {
    assertMayAssign(principal);
    const { customerId } = principal;
    const planIds = distinctIds(sentPlanIds);
    // Counted before the lock: a refused request holds no connection and no lock.
    await assignmentLimit.take(customerId);
    // First the lock, then every read: checks and writes see the state left by
    // the assignment that ran before, as if the two had run one after another.
    return customerLocks.forCustomer(customerId, context, async ({ dal, audit, emit }, found) => {
      await checkRequest(customerId, found, merchantIds, planIds, dal);
      const result = await dal.feeRules.replacePlans({ customerId, merchantIds }, planIds);
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
          ...result,
        },
      });
      await emit({
        type: 'FEE_RULES_ASSIGNED',
        customerId,
        data: {
          merchant_ids: merchantIds === 'all' ? null : merchantIds,
          payment_plan_ids: planIds,
          assignments_added: result.added,
          assignments_removed: result.removed,
        },
      });
      return result;
    });
  }

  /**
   * The dry run: the same checks, then the effect, all in one read-only snapshot.
   * It takes no lock (it writes nothing, so it neither waits for nor delays a
   * running assignment) and records no audit event: it changes nothing.
   */
  async function preview(
    principal: Principal,
    merchantIds: string[] | 'all',
    sentPlanIds: string[],
  ): Promise<DryRunResource> {
    assertMayAssign(principal);
    const { customerId } = principal;
    const planIds = distinctIds(sentPlanIds);
    const effect = await uow.snapshot(async (dal) => {
      await checkRequest(customerId, await dal.feeRules.customerExists(customerId), merchantIds, planIds, dal);
      return dal.feeRules.previewReplacement({ customerId, merchantIds }, planIds);
    });
    return {
      dry_run: true,
      merchants: effect.merchants,
      merchants_changed: effect.merchantsChanged,
      assignments_added: effect.added,
      assignments_removed: effect.removed,
      changes: effect.changes,
    };
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
    ): Promise<ReplacementResult> {
      return assign(principal, namedMerchants(principal, request), request.payment_plan_ids, context);
    },

    /** POST /v1/fee-rules/bulk-assign/all: every merchant the customer has when the assignment runs. */
    async assignToAllMerchants(
      principal: Principal,
      request: { payment_plan_ids: string[] },
      context: ChangeContext,
    ): Promise<ReplacementResult> {
      return assign(principal, 'all', request.payment_plan_ids, context);
    },

    /** POST /v1/fee-rules/bulk-assign?dry_run=true */
    async previewForMerchants(principal: Principal, request: AssignmentRequest): Promise<DryRunResource> {
      return preview(principal, namedMerchants(principal, request), request.payment_plan_ids);
    },

    /** POST /v1/fee-rules/bulk-assign/all?dry_run=true */
    async previewForAllMerchants(
      principal: Principal,
      request: { payment_plan_ids: string[] },
    ): Promise<DryRunResource> {
      return preview(principal, 'all', request.payment_plan_ids);
    },

    /**
     * GET /v1/merchants/{id}/fee-rules?at=: the plans the merchant held at `at`
     * (default now). A merchant the caller may not see is a 404.
     */
    async rulesAt(principal: Principal, merchantId: string, atText: string | undefined): Promise<FeeRulesAtResource> {
      const at = atText === undefined ? new Date() : parseInstant('at', atText);
      // With an id asked for, resolveMerchant answers that id or throws.
      const visible = (await merchants.resolveMerchant(principal, merchantId)) as string;
      const rows = await feeRulesDal.plansAt(visible, at);
      return {
        merchant_id: visible,
        at: at.toISOString(),
        data: rows.map((p) => ({ ...planFields(p), assigned_at: p.assignedAt })),
      };
    },
  };
}

export type FeeRulesService = ReturnType<typeof createFeeRulesService>;
