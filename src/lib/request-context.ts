import type { FastifyRequest } from 'fastify';
import { actorOf, type ChangeContext } from '../features/audit/audit-dal.js';

/** Who asks for a change and under which request id: what the audit trail records. */
export function changeContext(request: FastifyRequest): ChangeContext {
  return {
    requestId: String(request.id),
    actor: request.principal ? actorOf(request.principal) : { type: 'anonymous', id: null },
  };
}
