import type { Schemas } from '../../clients/typescript/index';
import { client, MAX_PAGE_SIZE, unwrap } from './api';

export type PaymentPlan = Schemas['PaymentPlan'];
/** A plan as a merchant's history lists it: without is_selected, with since when it was held. */
export type HeldPlan = Schemas['MerchantFeeRulesAt']['data'][number];

/** A plan of the fee-rule catalogue: whose it is, and whether it may still be assigned. */
export type CataloguePlan = Schemas['FeeRule'];

/** The assignable catalogue (ACTIVE plans), page by page (tens to hundreds of plans, one page; capped at 10,000). */
export async function loadCatalogue(): Promise<CataloguePlan[]> {
  const plans: CataloguePlan[] = [];
  for (let page = 0; page < 10; page++) {
    const listing = await unwrap(client.GET('/v1/fee-rules', { params: { query: { page, size: MAX_PAGE_SIZE } } }));
    plans.push(...listing.data);
    if (page + 1 >= listing.page.total_pages) break;
  }
  return plans;
}

export function planLabel(plan: Pick<CataloguePlan, 'card_brand' | 'payment_method' | 'term' | 'commission'>): string {
  return `${plan.card_brand} ${plan.payment_method} ${plan.term}x ${plan.commission}%`;
}

export function PlanFlags({ plan }: { plan: Pick<PaymentPlan | HeldPlan, 'is_international' | 'has_installments'> }) {
  return (
    <>
      {plan.is_international && <span className="tag">international</span>}
      {plan.has_installments && <span className="tag">installments</span>}
    </>
  );
}
