import { Type } from '@sinclair/typebox';
import { Listing, PageQuery, Timestamp, Uuid } from '../../schemas/common.js';

export const MerchantListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const Merchant = Type.Object({
  id: Uuid,
  customer_id: Uuid,
  name: Type.String(),
  create_date: Timestamp,
});

export const MerchantListing = Listing(Merchant);
