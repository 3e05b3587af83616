/** What the OpenAPI document says of the audit trail operations; their HTTP is in audit-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

export const AUDIT_DOCS = operationDocs('audit', {
  listAuditEvents: {
    summary: "List the audit trail of the caller's customer",
    description:
      "Every change made for the caller's customer (API keys created and deleted, bulk assignments, logouts), newest first (create_date, then id). " +
      'Filters: action (exact), from (inclusive) and to (exclusive). Records are written in the transaction of their change and are never edited. ' +
      'Errors: 400 `validation_failed` (a bad page, size or instant, or an unknown query parameter) or `invalid_time_range` (from after to); 403 `forbidden` for merchant callers.',
  },
});
