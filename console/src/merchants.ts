import { client, unwrap } from './api';
import type { Listing } from './ui';

export interface Merchant {
  id: string;
  customer_id: string;
  name: string;
  create_date: string;
}

export function listMerchants(page: number, size: number): Promise<Listing<Merchant>> {
  return unwrap<Listing<Merchant>>(client.GET('/v1/merchants', { params: { query: { page, size } } }));
}
