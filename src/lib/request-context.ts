import type { FastifyReply, FastifyRequest } from 'fastify';
import { actorOf, type ChangeContext } from './change-context.js';

/** Who asks for a change and under which request id: what the audit trail records. */
export function changeContext(request: FastifyRequest): ChangeContext {
  return {
    requestId: String(request.id),
    actor: request.principal ? actorOf(request.principal) : { type: 'anonymous', id: null },
    ...(request.idempotencyClaim ? { idempotency: request.idempotencyClaim } : {}),
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

/** True when the connection closed before the answer was sent: nobody will read it. */
export function hungUp(reply: FastifyReply): boolean {
  return !reply.raw.writableFinished && (reply.raw.destroyed || reply.request.raw.socket?.destroyed === true);
}

/** Connections this server closed because their request did not arrive in time (REQUEST_TIMEOUT_SECONDS). */
const timedOutSockets = new WeakSet<object>();

export function markTimedOut(socket: object): void {
  timedOutSockets.add(socket);
}

/**
 * Calls `onClosed` with the status to log and count when the connection of a
 * request closes before its answer was sent: 408 when this server gave up
 * waiting for the request, otherwise 499 (the client hung up, as nginx logs it).
 */
export function onClosedEarly(
  request: FastifyRequest,
  reply: FastifyReply,
  onClosed: (status: 408 | 499) => void,
): void {
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) return;
    onClosed(request.raw.socket && timedOutSockets.has(request.raw.socket) ? 408 : 499);
  });
}
