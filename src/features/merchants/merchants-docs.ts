/** What the OpenAPI document says of the merchant operations; their HTTP is in merchants-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

/** What both writes say of the platform's two shapes (contract section 20). */
const SHAPES =
  "The body may use the platform's v1 shape, its v2 shape or both: `tax.id` is `tax_identification.number` (its type is the country's: CUIT or RFC), " +
  '`tax.type` is `financial_info.tax_condition`, `representative.representative_id` is `representative.identification`; ' +
  'when both name one fact they must agree, else a 400 naming both fields. ' +
  '`settlement_condition.cbu_or_cvu` must be a CBU or CVU, 22 digits whose two check digits hold (stdnum, with its check digit 0 read right), else a 400 naming it; stored compact. ' +
  "The platform's per-country lengths apply: `business_name` 1-50 (ARG) / 1-60 (MEX), `fantasy_name` 1-50 / 1-18, `address.city` 1-30 / 1-18, " +
  '`address.zip` exactly 8 (ARG, a CPA such as B1900AAA) / 5-10 (MEX), `address.number` digits, 1-10 / 1-6: a 400 naming the field and the rule. ' +
  '`address.location` is `{ lat, lng }`, both or neither. The answer carries both generations of the record. ';

const CREATE =
  'Customer callers with write access (a login token, or a customer key with full access) add a merchant to their own customer: ' +
  "`customer_id` must be the caller's (another is a 404 `customer_not_found`, nothing written). Merchant callers get 403. " +
  SHAPES +
  '`tax_identification` (or `tax`) is required and must fit `country`: a CUIT in ARG, whose check digit must hold, or an RFC in MEX, whose format, date and check character must hold ' +
  '(checked by the stdnum library of national identifiers); anything else is a 400 `invalid_tax_identification` naming `tax_identification.number`. ' +
  'The number is stored and answered in its compact form (no dashes or spaces, an RFC in upper case). ' +
  '`merchant_code` is unique within the customer, compared exactly: a code another merchant of the customer has is a 409 `merchant_code_conflict`, also between concurrent requests ' +
  '(exactly one of them succeeds); another customer may use the same code. ' +
  'The new merchant is ACTIVE; its `name` (the display name) is its `fantasy_name`. Recorded as audit event `merchant.created` and domain event `MERCHANT_CREATED`.';

const UPDATE =
  'Changes the fields sent and keeps the others; `address`, `tax_identification` and `representative` are replaced whole, and null clears an optional field. ' +
  '`id`, `customer_id` and `country` cannot be changed (400 naming the field), nor `name`, which follows `fantasy_name`, else `business_name`. ' +
  "A `tax_identification` must fit the merchant's country as on creation, and the lengths of its country apply to the fields sent. " +
  SHAPES +
  '`status: INACTIVE` deactivates the merchant: from the answer on, every instance refuses its MERCHANT keys with 403 `merchant_inactive`, ' +
  '`POST /v1/fee-rules/bulk-assign` naming it is refused (422) and `/all` (and its dry run) skips it; it is still listed and readable, and keeps its plans. ' +
  '`status: ACTIVE` restores all of it. A change of status waits for a running assignment of the customer to end (503 `server_busy` past the statement timeout). ' +
  'Customer callers with write access only (merchant callers: 403); a merchant of another customer is a 404. ' +
  'A PATCH that changes nothing answers the merchant and records nothing; otherwise audit event `merchant.updated` (the fields changed) and domain event `MERCHANT_UPDATED`.';

export const MERCHANTS_DOCS = operationDocs('merchants', {
  listMerchants: {
    summary: "List the caller's merchants",
    description:
      'A customer caller sees every merchant of its customer; a merchant caller sees only itself. Newest first (create_date, then id). ' +
      '`q` searches among them: names containing the text in any letter case, or ids starting with it (so a full id finds that one merchant). ' +
      '`status` keeps ACTIVE or INACTIVE merchants only (default: both). ' +
      'Merchants made before onboarding through the API answer null for the fields they lack. Unknown query parameters are a 400. ' +
      "The answer is the platform's shape, `{ _embedded: { merchants }, page }` (no `data`). `size` goes up to 10,000, the platform's maximum: " +
      'a larger size is served as 10,000 and `page.size` tells the size used. A page is written as its rows are read (in batches), never held whole.',
  },
  listMerchantsV2: {
    summary: "List the caller's merchants (the platform's v2 path)",
    description: 'The same operation as GET /v1/merchants.',
  },
  getMerchant: {
    summary: 'One merchant',
    description:
      "A merchant of the caller's customer, or for a merchant caller itself; any other id is a 404 `merchant_not_found`, whether it exists or not.",
  },
  createMerchant: { summary: 'Onboard a merchant', description: CREATE },
  createMerchantV2: {
    summary: "Onboard a merchant (the platform's v2 path)",
    description: `The same operation as POST /v1/merchants. ${CREATE}`,
  },
  updateMerchant: { summary: 'Change a merchant, or deactivate and reactivate it', description: UPDATE },
  updateMerchantV2: {
    summary: "Change a merchant (the platform's v2 path)",
    description: `The same operation as PATCH /v1/merchants/{id}. ${UPDATE}`,
  },
});
