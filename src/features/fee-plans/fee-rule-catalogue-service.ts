/**
 * The fee-rule catalogue (docs/api.md, "The fee-rule catalogue"): platform plans
 * and a customer's own, each ACTIVE or RETIRED. A customer creates plans of its
 * own (never changed afterwards: a new rate is a new plan, swapped in by the
 * replacement rule) and retires them. Retiring stops new assignments only: a
 * merchant's fee never changes under it through a catalogue edit. Both take the
 * customer's assignment lock, so they run one after another with assignments:
 * an assignment never sees a plan half retired, and two identical plans cannot
 * both be created.
 */
import type { Static } from '@sinclair/typebox';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { COMMISSION_DECIMALS, exactCommission } from '../../lib/commission.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import type { Principal } from '../../lib/principal.js';
import type { CataloguePlanRow, NewPlan, PaymentPlansDal, PlanOwner, PlanStatus } from './payment-plans-dal.js';
import { type PaymentPlanResource, planWith } from './payment-plans-service.js';
import type { FeeRulesDals } from './assignment-checks.js';
import type { NewFeeRuleBody } from './fee-rule-catalogue-schemas.js';
import type { CustomerLocks } from '../../db/customer-locks.js';
import { approvable, type Held } from './fee-change-requests.js';

export type FeeRuleResource = Omit<PaymentPlanResource, 'is_selected'> & { owner: PlanOwner; status: PlanStatus };

export interface FeeRuleListRequest extends PageRequest {
  card_brand?: string | undefined;
  payment_method?: string | undefined;
  status?: PlanStatus | undefined;
  owner?: PlanOwner | undefined;
}

/** A new plan as the API takes it (its schema is the one source). */
export type NewFeeRuleRequest = Static<typeof NewFeeRuleBody>;

function toResource(row: CataloguePlanRow): FeeRuleResource {
  return planWith(row, { owner: row.owner, status: row.status });
}

/** The plan as stored: codes upper-cased, the commission as exact decimal text (more than 4 decimals is a 400). */
function newPlan(request: NewFeeRuleRequest): NewPlan {
  const commission = exactCommission(request.commission);
  if (commission === undefined)
    throw new ValidationError(
      [{ field: 'commission', message: `must have at most ${COMMISSION_DECIMALS} decimals` }],
      'The request is not valid.',
    );
  return {
    paymentMethod: request.payment_method.toUpperCase(),
    cardBrand: request.card_brand.toUpperCase(),
    term: request.term,
    commission,
    hasInstallments: request.has_installments,
    isInternational: request.is_international,
  };
}

export function createFeeRuleCatalogueService(deps: {
  paymentPlansDal: Pick<PaymentPlansDal, 'listCatalogue'>;
  customerLocks: CustomerLocks<FeeRulesDals>;
}) {
  const { paymentPlansDal, customerLocks } = deps;

  return {
    /** GET /v1/fee-rules: ACTIVE plans unless `status` says otherwise, newest first. */
    async list(principal: Principal, request: FeeRuleListRequest): Promise<Page<FeeRuleResource>> {
      const { rows, total } = await paymentPlansDal.listCatalogue(
        principal.customerId,
        {
          cardBrand: request.card_brand?.toUpperCase(),
          paymentMethod: request.payment_method?.toUpperCase(),
          status: request.status ?? 'ACTIVE',
          owner: request.owner,
        },
        request,
      );
      return toPage(rows.map(toResource), total, request);
    },

    /** POST /v1/fee-rules: a plan of the caller's customer; an identical ACTIVE one is a 409 naming it. */
    async create(
      principal: Principal,
      request: NewFeeRuleRequest,
      context: ChangeContext,
    ): Promise<FeeRuleResource | Held> {
      const { customerId } = principal;
      const plan = newPlan(request);
      return customerLocks.forCustomer(customerId, context, async ({ dal, audit, emit, holdForApproval }, found) => {
        if (!found) throw new NotFoundError('customer_not_found');
        const existing = await dal.paymentPlans.findIdentical(customerId, plan);
        if (existing)
          throw new ConflictError(
            'payment_plan_exists',
            `The ACTIVE plan ${existing} of this customer has the same six fields; assign it, or retire it first.`,
            { payment_plan_id: existing },
          );
        const asked = {
          operation: 'payment_plan.create',
          method: 'POST',
          path: '/v1/fee-rules',
          subjectId: null,
        } as const;
        const held = await holdForApproval(
          approvable(customerId, { ...asked, body: request }, { preview: async () => ({ payment_plan: request }) }),
        );
        if (held) return held;
        const created = toResource(await dal.paymentPlans.create(customerId, plan));
        await audit({
          action: 'payment_plan.created',
          customerId,
          targetType: 'payment_plan',
          targetId: created.id,
          details: created,
        });
        await emit({ type: 'PAYMENT_PLAN_CREATED', customerId, data: created });
        return created;
      });
    },

    /** DELETE /v1/fee-rules/{id}: retires the customer's own plan; again is a no-op; any other plan is a 404. */
    async retire(principal: Principal, planId: string, context: ChangeContext): Promise<Held | undefined> {
      const { customerId } = principal;
      return customerLocks.forCustomer(customerId, context, async ({ dal, audit, emit, holdForApproval }) => {
        const own = await dal.paymentPlans.findOwn(customerId, planId.toLowerCase());
        if (!own) throw new NotFoundError('payment_plan_not_found');
        const path = `/v1/fee-rules/${own.id}`;
        const asked = {
          operation: 'payment_plan.retire',
          method: 'DELETE',
          path,
          subjectId: own.id,
          body: null,
        } as const;
        const preview = async () => ({ payment_plan: toResource(own) });
        const held = await holdForApproval(approvable(customerId, asked, { preview }));
        if (held) return held;
        const result = await dal.paymentPlans.retire(customerId, own.id);
        if (!result?.retired) return;
        const retired = toResource(result.plan);
        await audit({
          action: 'payment_plan.retired',
          customerId,
          targetType: 'payment_plan',
          targetId: retired.id,
          details: retired,
        });
        await emit({ type: 'PAYMENT_PLAN_RETIRED', customerId, data: retired });
      });
    },
  };
}

export type FeeRuleCatalogueService = ReturnType<typeof createFeeRuleCatalogueService>;
