import type { FastifyReply, FastifyRequest } from 'fastify';
import { actorOf, type ChangeContext } from './change-context.js';

/** Who asks for a change and under which request id: what the audit trail records. */
export function changeContext(request: FastifyRequest): ChangeContext {
  return {
    requestId: String(request.id),
    actor: request.principal ? actorOf(request.principal) : { type: 'anonymous', id: null },
  };
}

/** Aborts when the connection closes before the answer is sent: lets queued work for a departed client be dropped. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
