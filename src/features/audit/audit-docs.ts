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
  exportAuditEvents: {
    summary: "Export the caller customer's audit trail for a range",
    description:
      'Every record of [from, to), oldest first (create_date, then id), streamed as it is read, so a range of a million records costs the service no more memory than one of ten. ' +
      'format=ndjson (the default) writes one AuditEvent per line, exactly as GET /v1/audit-events writes it; format=csv writes RFC 4180 CSV (header line, CRLF line ends, a field with a comma, quote or line break quoted) ' +
      'with the columns id, create_date, action, actor_type, actor_id, actor_user, request_id, target_type, target_id and details (the JSON object as text). ' +
      'A range covers at most 366 days. A record is written with the instant its change began, so a record of a change still in progress when the export reads past that instant is in no export that already ran: export ranges that ended a minute ago. ' +
      'Errors: 400 `validation_failed` (from or to missing or not an instant, an unknown format or query parameter) or `invalid_time_range` (from after to, or more than 366 days); 403 `forbidden` for merchant callers.',
  },
});
