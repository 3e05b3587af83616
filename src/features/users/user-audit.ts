/** The audit record of a change of a user (never a password, code or secret). */
import type { AuditEvent } from '../audit/audit-dal.js';

export const auditUser = (
  action: string,
  row: { id: string; customerId: string },
  details: Record<string, unknown> = {},
): AuditEvent => ({ action, customerId: row.customerId, targetType: 'user', targetId: row.id, details });
