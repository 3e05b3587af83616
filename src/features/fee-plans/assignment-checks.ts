/**
 * What every assignment checks before it changes anything, whether it runs now,
 * is previewed or is scheduled (docs/api.md#payment-plans-and-fee-rules): the
 * customer exists, every plan is one it may assign (known, not retired, no two of
 * the same kind and term), and every named merchant is its own and ACTIVE.
 */
import { NotFoundError, UnprocessableError } from '../../errors.js';
import type { MerchantsDal } from '../merchants/merchants-dal.js';
import type { PaymentPlanKind, PaymentPlansDal } from './payment-plans-dal.js';
import type { FeeRulesDal } from './fee-rules-dal.js';
import type { ScheduledChangesDal } from './scheduled-changes-dal.js';

/** The DALs an assignment reads and writes through, in its unit of work. */
export interface FeeRulesDals {
  feeRules: FeeRulesDal;
  merchants: MerchantsDal;
  paymentPlans: PaymentPlansDal;
  scheduledChanges: ScheduledChangesDal;
}

/** Ids as PostgreSQL prints them, each once, in the order first sent. */
export function distinctIds(ids: readonly string[]): string[] {
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

async function checkPlans(customerId: string, planIds: string[], dal: FeeRulesDals): Promise<void> {
  const found = await dal.paymentPlans.findInCatalogue(customerId, planIds);
  const known = new Map(found.map((p) => [p.id, p]));
  const unknown = planIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new UnprocessableError('unknown_payment_plans', 'Some payment plans do not exist for this customer.', {
      payment_plan_ids: unknown,
    });
  }
  const retired = planIds.filter((id) => known.get(id)?.status === 'RETIRED');
  if (retired.length > 0) {
    throw new UnprocessableError(
      'retired_payment_plans',
      'Some payment plans are retired and can no longer be assigned.',
      { payment_plan_ids: retired },
    );
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

/** What a change, its dry run and its scheduling all check, in one transaction, after `found` told whether the customer exists. */
export async function checkAssignment(
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
