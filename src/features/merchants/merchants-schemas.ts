import { Type } from '@sinclair/typebox';
import { Component, Listing, PageQuery, Text, Timestamp, Uuid } from '../../schemas/common.js';

export const MerchantListQuery = Type.Object(
  {
    ...PageQuery,
    q: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 100,
        description: 'Only merchants whose name contains this text (any letter case), or whose id starts with it',
        examples: ['coffee'],
      }),
    ),
  },
  { additionalProperties: false },
);

const EXAMPLE = {
  id: 'b8c9d0e1-f2a3-4b4c-9d5e-6f7a8b9c0d1e',
  customer_id: '6a1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  name: 'Acme Coffee, Main Street',
  create_date: '2026-10-02T14:05:00.000Z',
};

export const Merchant = Component(
  'Merchant',
  Type.Object(
    { id: Uuid, customer_id: Uuid, name: Type.String(), create_date: Timestamp },
    { description: 'A merchant of a customer', examples: [EXAMPLE] },
  ),
);

export const MerchantListing = Listing(Merchant, 'MerchantListing', {
  description: 'A page of merchants, newest first',
  examples: [{ data: [EXAMPLE], page: { size: 10, total_elements: 1, total_pages: 1, number: 0 } }],
});
