/** Who asks for a change and under which request id: what the audit trail records. */
import type { Principal } from './principal.js';

export interface Actor {
  type: 'user' | 'api_key' | 'operator' | 'anonymous' | 'system';
  id: string | null;
}

/** An answer as kept for an Idempotency-Key retry, replayed byte for byte. */
export interface StoredAnswer {
  status: number;
  contentType: string | null;
  location: string | null;
  body: string;
}

/**
 * A request's hold on its Idempotency-Key (docs/design.md, "Idempotent
 * requests"): the unit of work stores the answer of the request's change in
 * the change's own transaction, so both commit or neither does.
 */
export interface IdempotencyClaim {
  readonly id: string;
  readonly token: string;
  /** The answer the request gives when its change reports `value` (the route's status and serialiser); null when that depends on more. */
  answerFor(value: unknown): StoredAnswer | null;
  /** The answer a committed change stored with itself, once one has. */
  stored: StoredAnswer | undefined;
}

/**
 * Set while an approval applies a held fee change (contract section 23): the
 * change request, who asked for it, and the hash of the preview the approver
 * saw (the change applies only while the preview is still that).
 */
export interface ApprovalOfChange {
  changeRequestId: string;
  requestedBy: Actor;
  previewHash?: string | undefined;
}

/** What a service needs to know about the request that asks for a change. */
export interface ChangeContext {
  requestId: string | null;
  actor: Actor;
  /** Set when the request sent an Idempotency-Key that it now holds. */
  idempotency?: IdempotencyClaim;
  /** Set when the change is a held change that an approval applies. */
  approval?: ApprovalOfChange;
}

export function actorOf(principal: Principal): Actor {
  return principal.auth === 'api_key'
    ? { type: 'api_key', id: principal.apiKeyId }
    : { type: 'user', id: principal.userId };
}

export const OPERATOR_CONTEXT: ChangeContext = { requestId: null, actor: { type: 'operator', id: null } };

/** Changes the service makes by itself (a subscription disabled after days of failures, a key's expiry warning). */
export const SYSTEM_CONTEXT: ChangeContext = { requestId: null, actor: { type: 'system', id: null } };
