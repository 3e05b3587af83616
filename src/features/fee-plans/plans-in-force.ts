/**
 * The plans a merchant held at an instant: the one home of the query behind
 * GET /v1/merchants/{id}/fee-rules?at= (fee-rules-service.ts) and the fee quotes
 * (features/fee-quotes), so both answer the same plan for the same instant. Up
 * to now from the merchant's timeline (in memory when held, fee-rule-timelines.ts);
 * after now, what it holds now with the pending scheduled changes applied.
 */
import type { PaymentPlansDal } from './payment-plans-dal.js';
import type { FeeRulesDal } from './fee-rules-dal.js';
import type { HeldPlanRow, TimelineRow } from './fee-rule-history-dal.js';
import type { FeeRuleTimelines } from './fee-rule-timelines.js';
import { projectPendingChanges } from './projected-plans.js';
import type { ScheduledChangesDal } from './scheduled-changes-dal.js';

export type { HeldPlanRow, TimelineRow } from './fee-rule-history-dal.js';

export interface PlansInForceDeps {
  feeRulesDal: Pick<FeeRulesDal, 'timeline' | 'plansAt'>;
  paymentPlansDal: Pick<PaymentPlansDal, 'findPlans'>;
  scheduledChangesDal: Pick<ScheduledChangesDal, 'pendingFor'>;
  timelines: Pick<FeeRuleTimelines, 'get' | 'token' | 'set'>;
}

/** The rows of a timeline in force at `at` (ISO 8601 UTC with milliseconds, as the rows print times): [assignedAt, removedAt). */
export function heldIn(timeline: TimelineRow[], at: string): TimelineRow[] {
  return timeline.filter((p) => p.assignedAt <= at && (p.removedAt === null || p.removedAt > at));
}

export function createPlansInForce(deps: PlansInForceDeps) {
  const { feeRulesDal, paymentPlansDal, scheduledChangesDal, timelines } = deps;
  return {
    /**
     * Every plan a customer's merchant holds or held. A timeline is stored only
     * once `visible` (which throws for a merchant the caller may not see, and
     * answers its id as PostgreSQL prints it) has passed, so a hit proves the
     * customer's caller may see it.
     */
    async timeline(customerId: string, merchantId: string, visible: () => Promise<string>): Promise<TimelineRow[]> {
      const held = timelines.get(customerId, merchantId);
      if (held) return held;
      const token = timelines.token();
      const id = await visible();
      return timelines.set(customerId, id, await feeRulesDal.timeline(id), token);
    },

    /** A future instant: what the merchant holds now, with the customer's pending changes up to `at` applied in order. */
    async projected(customerId: string, merchantId: string, at: Date, now: Date): Promise<HeldPlanRow[]> {
      const [held, pending] = await Promise.all([
        feeRulesDal.plansAt(merchantId, now),
        scheduledChangesDal.pendingFor(customerId, merchantId, at),
      ]);
      const plans = await paymentPlansDal.findPlans([...new Set(pending.flatMap((c) => c.paymentPlanIds))]);
      return projectPendingChanges(held, pending, plans);
    },
  };
}

export type PlansInForce = ReturnType<typeof createPlansInForce>;
