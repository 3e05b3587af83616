/** What the OpenAPI document says of the fee rule operations; their HTTP is in fee-rules-routes.ts. */
import { operationDocs } from '../../schemas/common.js';
import { WAITING_PER_CUSTOMER } from '../../db/customer-locks.js';

const ERRORS_422 =
  '422 `unknown_payment_plans` (member `payment_plan_ids`: ids that are not platform plans or plans of the caller customer), ' +
  '`retired_payment_plans` (member `payment_plan_ids`: plans retired from the catalogue, no longer assignable), ' +
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

const SCHEDULED =
  'With `effective_at` (RFC 3339 with an offset, at least 5 s and at most 400 days ahead, else 400 `validation_failed` naming it; a leap second is refused): 202 with the scheduled change, after the same checks as the immediate call (422s included) and counted against the same per-customer limit. ' +
  'At effective_at the change is applied by the replacement rule to the state of that moment (for every merchant: those of that moment), in one transaction, within 5 s of the instant, once, by one instance even with several running and across restarts; its assignments carry assigned_at = effective_at exactly. ' +
  "A plan retired meanwhile (or a merchant that can no longer be assigned to) is skipped and reported in the change's `outcome`. With `dry_run=true` too: the preview of the present state, nothing scheduled.";

const INACTIVE =
  'INACTIVE merchants get no new plans: naming one is a 422 `inactive_merchants` (member `merchant_ids`: the INACTIVE ones), also in a dry run.';

export const FEE_RULES_DOCS = operationDocs('fee rules', {
  bulkAssignFeeRules: {
    summary: 'Assign payment plans to the named merchants',
    description: `${RULE} Missing or empty merchant_ids is a 400 merchant_ids_required pointing to /v1/fee-rules/bulk-assign/all. ${ERRORS_422} ${INACTIVE} ${LIMIT} ${DRY_RUN} ${SCHEDULED}`,
  },
  bulkAssignFeeRulesToAll: {
    summary: 'Assign payment plans to every merchant of the customer',
    description: `Targets every ACTIVE merchant of the caller customer at the moment the assignment runs, and no other: INACTIVE merchants are skipped (by the dry run too) and keep their plans. merchant_ids is not accepted here (400). ${RULE} ${ERRORS_422} ${LIMIT} ${DRY_RUN} ${SCHEDULED}`,
  },
  assignMerchantFeeRules: {
    summary: 'Assign payment plans to one merchant',
    description: `The bulk assignment for the merchant of the path: 201 without a body. A merchant the caller may not see is a 404 \`merchant_not_found\`. ${RULE} ${ERRORS_422} ${INACTIVE} ${LIMIT} ${DRY_RUN} ${SCHEDULED}`,
  },
  listFeeRules: {
    summary: 'List the fee-rule catalogue',
    description:
      "The plans the caller may assign: platform plans (owner PLATFORM) and the caller customer's own (owner CUSTOMER), never another customer's; ACTIVE ones unless `status=RETIRED`. " +
      'Filters: card_brand, payment_method (any case), owner. Newest first (create_date, then id). Merchant callers read their customer’s catalogue too. Unknown query parameters are a 400.',
  },
  createFeeRule: {
    summary: "Create a plan of the caller customer's own",
    description:
      'Customer callers with write access: 201 with the plan (owner CUSTOMER, status ACTIVE). Plans never change once made: to change a rate, create a plan and assign it (the replacement rule swaps it in for the plan of the same kind). ' +
      'Codes are taken in any case and stored upper-case; the commission keeps at most 4 decimals (more is a 400). ' +
      'An ACTIVE plan of the same customer with the same six fields: 409 `payment_plan_exists`, with its id in `payment_plan_id`. Audit event payment_plan.created; event PAYMENT_PLAN_CREATED. Merchant callers: 403 `forbidden`.',
  },
  retireFeeRule: {
    summary: "Retire a plan of the caller customer's own",
    description:
      'The plan becomes RETIRED: no longer listed by default and no longer assignable (an assignment naming it, immediate or scheduled, answers 422; a change scheduled before skips it), but the merchants that hold it keep it until a change replaces it: a fee never changes under a merchant by a catalogue edit. ' +
      'Idempotent: retiring a retired plan is again 204 and records nothing. A platform plan, another customer’s plan or an unknown id: 404 `payment_plan_not_found`. Audit event payment_plan.retired; event PAYMENT_PLAN_RETIRED.',
  },
  listScheduledChanges: {
    summary: 'List scheduled fee-rule changes',
    description:
      "The caller customer's scheduled changes, newest first (create_date, then id), all or of one `status` (PENDING, APPLIED, CANCELLED). An applied change has `applied_at` and its `outcome`: the counts of what it changed and what it skipped. Customer callers only (merchant callers: 403).",
  },
  cancelScheduledChange: {
    summary: 'Cancel a scheduled fee-rule change',
    description:
      'A PENDING change becomes CANCELLED (204) and will not apply; cancelling a cancelled change is again 204. An applied change: 409 `scheduled_change_not_pending` (a cancel that races the instance applying it waits for it, then answers this). ' +
      "Another customer's change or an unknown id: 404 `scheduled_change_not_found`. Audit event fee_rules.schedule_cancelled.",
  },
  getMerchantFeeRules: {
    summary: 'The payment plans a merchant held at an instant',
    description:
      'The plans assigned to the merchant at `at` (default now), with since when it has held each one, ordered by card_brand, payment_method, is_international, has_installments, term. ' +
      'For reconciling a transaction against the rule in force when it happened: every assignment and replacement is kept as history. ' +
      'An instant before any assignment answers an empty list. The plan fields are the plan as it is now. ' +
      'A future instant answers what the merchant will hold if the PENDING scheduled changes up to it apply as scheduled (retired plans skipped; none for a merchant INACTIVE now, as a change applies to ACTIVE merchants only), each added plan with assigned_at = its change’s effective_at. ' +
      'Customer callers: any merchant of their customer; merchant callers: only themselves. ' +
      'Errors: 400 `validation_failed` (a malformed id or `at`, or an unknown query parameter); 404 `merchant_not_found` (a merchant the caller may not see, whether or not it exists).',
  },
});
