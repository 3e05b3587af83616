import { client, MAX_PAGE_SIZE, unwrap } from './api';
import type { Listing } from './ui';

export interface PaymentPlan {
  id: string;
  payment_method: string;
  term: number;
  commission: number;
  card_brand: string;
  is_selected?: boolean;
  has_installments: boolean;
  is_international: boolean;
  assigned_at?: string;
}

/** The whole catalogue, page by page (it is tens to hundreds of plans, one page; capped at 10,000). */
export async function loadCatalogue(): Promise<PaymentPlan[]> {
  const plans: PaymentPlan[] = [];
  for (let page = 0; page < 10; page++) {
    const listing = await unwrap<Listing<PaymentPlan>>(client.GET('/v1/payment-plans', { params: { query: { page, size: MAX_PAGE_SIZE } } }));
    plans.push(...listing.data);
    if (page + 1 >= listing.page.total_pages) break;
  }
  return plans;
}

export function planLabel(plan: PaymentPlan): string {
  return `${plan.card_brand} ${plan.payment_method} ${plan.term}x ${plan.commission}%`;
}

export function PlanFlags({ plan }: { plan: PaymentPlan }) {
  return (
    <>
      {plan.is_international && <span className="tag">international</span>}
      {plan.has_installments && <span className="tag">installments</span>}
    </>
  );
}
