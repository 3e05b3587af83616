/** What the OpenAPI document says of the fee rule operations; their HTTP is in fee-rules-routes.ts. */
import { operationDocs } from '../../schemas/common.js';
import { WAITING_PER_CUSTOMER } from './customer-locks.js';

const ERRORS_422 =
  '422 `unknown_payment_plans` (member `payment_plan_ids`: ids that are not platform plans or plans of the caller customer), ' +
  '`unknown_merchants` (member `merchant_ids`: ids that are not merchants of the caller customer) or ' +
  '`conflicting_payment_plans` (two plans with the same card_brand, payment_method, is_international, has_installments and term; members `payment_plan_ids` and `conflicts`).';

const RULE =
  'Replacement rule: for each target merchant, the current plans that share (card_brand, payment_method, is_international, has_installments) with a sent plan are dropped, then every sent plan is added; all other current plans stay. ' +
  `All or nothing, in one transaction with its audit record and the history of what was replaced (GET /v1/merchants/{id}/fee-rules?at=); concurrent assignments of one customer run one after another, waiting their turn without holding anything other customers need; when ${WAITING_PER_CUSTOMER} already wait on an instance, or one has waited as long as a statement may run (DATABASE_STATEMENT_TIMEOUT_MS, 60 s by default), it answers 503 \`server_busy\` with Retry-After and changes nothing. A request that changes nothing writes nothing: no history and no audit record. Merchant callers get 403 \`forbidden\`; a caller whose customer no longer exists 404 \`customer_not_found\`.`;

const LIMIT =
  'Assignment requests are limited per customer, for all its tokens and keys together: ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE (30 by default) in a window of a minute, counted when a request arrives whatever its outcome; beyond it 429 `rate_limited` with Retry-After and RateLimit-* headers, before anything is read or written. Dry runs are not counted.';

const DRY_RUN =
  'With `dry_run=true`: 200 with the counts of what would change and the first 100 changed merchants by id, after the same checks and with the same errors; nothing is written, not even an audit record. ' +
  'Unknown query parameters (a misspelt dry_run) are a 400 `validation_failed` and change nothing.';

export const FEE_RULES_DOCS = operationDocs('fee rules', {
  bulkAssignFeeRules: {
    summary: 'Assign payment plans to the named merchants',
    description: `${RULE} Missing or empty merchant_ids is a 400 merchant_ids_required pointing to /v1/fee-rules/bulk-assign/all. ${ERRORS_422} INACTIVE merchants get no new plans: naming one is a 422 \`inactive_merchants\` (member \`merchant_ids\`: the INACTIVE ones), also in a dry run. ${LIMIT} ${DRY_RUN}`,
  },
  bulkAssignFeeRulesToAll: {
    summary: 'Assign payment plans to every merchant of the customer',
    description: `Targets every ACTIVE merchant of the caller customer at the moment the assignment runs, and no other: INACTIVE merchants are skipped (by the dry run too) and keep their plans. merchant_ids is not accepted here (400). ${RULE} ${ERRORS_422} ${LIMIT} ${DRY_RUN}`,
  },
  getMerchantFeeRules: {
    summary: 'The payment plans a merchant held at an instant',
    description:
      'The plans assigned to the merchant at `at` (default now), with since when it has held each one, ordered by card_brand, payment_method, is_international, has_installments, term. ' +
      'For reconciling a transaction against the rule in force when it happened: every assignment and replacement is kept as history. ' +
      'An instant before any assignment answers an empty list. The plan fields are the plan as it is now. ' +
      'Customer callers: any merchant of their customer; merchant callers: only themselves. ' +
      'Errors: 400 `validation_failed` (a malformed id or `at`, or an unknown query parameter); 404 `merchant_not_found` (a merchant the caller may not see, whether or not it exists).',
  },
});
