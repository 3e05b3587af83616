/** An audit record as the API writes it: GET /v1/audit-events, its export, and the AUDIT_RECORD event. */
import type { AuditRow } from './audit-dal.js';

export interface AuditEventResource {
  id: string;
  action: string;
  actor: { type: string; id: string | null; user: string | null };
  request_id: string | null;
  target: { type: string; id: string | null };
  details: Record<string, unknown>;
  create_date: string;
}

export function auditResource(e: AuditRow): AuditEventResource {
  return {
    id: String(e.id),
    action: e.action,
    actor: { type: e.actorType, id: e.actorId, user: e.actorUser },
    request_id: e.requestId,
    target: { type: e.targetType, id: e.targetId },
    details: e.details as Record<string, unknown>,
    create_date: e.occurredAt.toISOString(),
  };
}
