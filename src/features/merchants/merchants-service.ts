/** Merchant listing, and the one rule every merchant-scoped read shares: whose merchant may be named. */
import { NotFoundError } from '../../errors.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import type { Principal } from '../../lib/principal.js';
import type { MerchantScope, MerchantsDal } from './merchants-dal.js';

export interface MerchantResource {
  id: string;
  customer_id: string;
  name: string;
  create_date: string;
}

function scopeOf(principal: Principal): MerchantScope {
  return { customerId: principal.customerId, merchantId: principal.merchantId };
}

export function createMerchantsService(deps: { merchantsDal: MerchantsDal }) {
  const { merchantsDal } = deps;

  return {
    async list(principal: Principal, query: PageRequest & { q?: string }): Promise<Page<MerchantResource>> {
      const { rows, total } = await merchantsDal.list(scopeOf(principal), {
        page: query.page,
        size: query.size,
        search: query.q,
      });
      const data = rows.map((m) => ({
        id: m.id,
        customer_id: m.customerId,
        name: m.name,
        create_date: m.createdAt.toISOString(),
      }));
      return toPage(data, total, query);
    },

    /**
     * The merchant a request is about. A merchant caller is always about itself
     * (by default, or by naming itself); anything else the caller may not see is
     * a 404 that says nothing about whether it exists.
     */
    async resolveMerchant(principal: Principal, requested: string | undefined): Promise<string | null> {
      const merchantId = requested?.toLowerCase();
      if (principal.merchantId !== null) {
        if (merchantId !== undefined && merchantId !== principal.merchantId) throw merchantNotFound();
        return principal.merchantId;
      }
      if (merchantId === undefined) return null;
      if (!(await merchantsDal.belongsToCustomer(principal.customerId, merchantId))) throw merchantNotFound();
      return merchantId;
    },
  };
}

function merchantNotFound(): NotFoundError {
  return new NotFoundError('merchant_not_found');
}

export type MerchantsService = ReturnType<typeof createMerchantsService>;
