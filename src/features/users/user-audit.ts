/** The audit record of a change to a user (user.created, user.mfa_enabled, ...): never a password, code or secret. */
import type { AuditEvent } from '../audit/audit-dal.js';

export const auditUser = (
  action: string,
  row: { id: string; customerId: string },
  details: Record<string, unknown> = {},
) => ({ action, customerId: row.customerId, targetType: 'user', targetId: row.id, details }) satisfies AuditEvent;
