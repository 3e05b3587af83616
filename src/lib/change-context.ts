/** Who asks for a change and under which request id: what the audit trail records. */
import type { Principal } from './principal.js';

export interface Actor {
  type: 'user' | 'api_key' | 'operator' | 'anonymous' | 'system';
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

/** Changes the service makes by itself (a subscription disabled after days of failures, a key's expiry warning). */
export const SYSTEM_CONTEXT: ChangeContext = { requestId: null, actor: { type: 'system', id: null } };
