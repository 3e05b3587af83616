/**
 * Fastify hooks whose usual path does not wait. An `async` hook costs every
 * request a promise and Fastify's `then` on it; with traces on, Node 20's
 * AsyncLocalStorage (OpenTelemetry's context) runs hooks of its own for each
 * promise, which made them most of what tracing cost a request
 * (docs/performance.md, line 2d). These hooks make a promise only when their
 * work has something to wait for.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** What a hook does: nothing to wait for (undefined), or the promise of what it waits for. */
type HookWork<A extends unknown[]> = (
  request: FastifyRequest,
  reply: FastifyReply,
  ...rest: A
) => Promise<unknown> | undefined;

/** Runs `work`, then `next` at once, or once what it waits for settles; a failure goes to `failed`. */
function settle(start: () => Promise<unknown> | undefined, next: () => void, failed: (err: Error) => void): void {
  let waiting: Promise<unknown> | undefined;
  try {
    waiting = start();
  } catch (err) {
    failed(err as Error);
    return;
  }
  if (waiting) waiting.then(next, failed);
  else next();
}

/** An onRequest, preValidation, preHandler or onResponse hook made of `work`. */
export function requestHook(work: HookWork<[]>) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void =>
    settle(
      () => work(request, reply),
      () => done(),
      done,
    );
}

/** An onSend hook made of `work`: the payload goes on as it came. */
export function sendHook(work: HookWork<[payload: unknown]>) {
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (err: Error | null, payload?: unknown) => void,
  ): void =>
    settle(
      () => work(request, reply, payload),
      () => done(null, payload),
      (err) => done(err),
    );
}
