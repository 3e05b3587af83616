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

/**
 * Runs `work`, then `next` at once; what waits is handed back to Fastify, whose
 * runner then goes on when it settles and answers its failure (even one thrown
 * while the answer is written after it), as it does for an `async` hook.
 */
function settle<T>(
  start: () => Promise<unknown> | undefined,
  next: () => void,
  failed: (err: Error) => void,
  resolved: (waiting: Promise<unknown>) => Promise<T>,
): Promise<T> | undefined {
  let waiting: Promise<unknown> | undefined;
  try {
    waiting = start();
  } catch (err) {
    failed(err as Error);
    return undefined;
  }
  if (waiting) return resolved(waiting);
  next();
  return undefined;
}

/** An onRequest, preValidation, preHandler or onResponse hook made of `work`. */
export function requestHook(work: HookWork<[]>) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) =>
    settle(
      () => work(request, reply),
      () => done(),
      done,
      (waiting) => waiting.then(() => undefined),
    );
}

/** An onSend hook made of `work`: the payload goes on as it came. */
export function sendHook(work: HookWork<[payload: unknown]>) {
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (err: Error | null, payload?: unknown) => void,
  ) =>
    settle(
      () => work(request, reply, payload),
      () => done(null, payload),
      (err) => done(err),
      (waiting) => waiting.then(() => payload),
    );
}
