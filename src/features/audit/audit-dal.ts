/**
 * Audit records are written by the same transaction as the change they describe:
 * a change without its record, or a record without its change, cannot exist.
 */
import { auditEvents } from '../../db/schema.js';
import type { DbOrTx } from '../../db/database.js';
import type { Principal } from '../auth/principal.js';

export interface Actor {
  type: 'user' | 'api_key' | 'operator' | 'anonymous';
  id: string | null;
}

/** What a service needs to know about the request that asks for a change. */
export interface ChangeContext {
  requestId: string | null;
  actor: Actor;
}

export function actorOf(principal: Principal): Actor {
  return principal.auth === 'api_key'
    ? { type: 'api_key', id: principal.apiKeyId }
    : { type: 'user', id: principal.userId };
}

export const OPERATOR_CONTEXT: ChangeContext = { requestId: null, actor: { type: 'operator', id: null } };

export interface AuditEvent {
  action: string;
  customerId: string | null;
  targetType: string;
  targetId: string | null;
  details?: Record<string, unknown>;
}

export async function recordAudit(tx: DbOrTx, context: ChangeContext, event: AuditEvent): Promise<void> {
  await tx.insert(auditEvents).values({
    requestId: context.requestId,
    actorType: context.actor.type,
    actorId: context.actor.id,
    customerId: event.customerId,
    action: event.action,
    targetType: event.targetType,
    targetId: event.targetId,
    details: event.details ?? {},
  });
}
