/**
 * The Idempotency-Key header on every POST and PATCH (contract section 21,
 * docs/design.md "Idempotent requests"). Before validation, a caller's request
 * with a key claims it (src/features/idempotency/idempotency-service.ts) or is
 * answered at once: the stored answer replayed with `Idempotent-Replayed: true`,
 * 422 `idempotency_key_reused`, 409 `idempotency_key_in_use`, or 409
 * `idempotency_answer_unreadable` when the kept answer no longer opens. A claimed
 * request's change stores its answer in its own transaction (the claim rides in
 * the change context to the unit of work, which renders the answer with the
 * route's serialiser); only an answer that reports no change (a 4xx refused
 * before any write, a dry run) is stored as it is sent, and
 * test/idempotency/answer-with-change.test.ts fails any operation whose change
 * leaves its answer to that; a 5xx, 429 or an answer nobody reads lets the key go.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequestError } from '../errors.js';
import type { HeldClaim, IdempotencyService, KeyScope } from '../features/idempotency/idempotency-service.js';
import type { IdempotencyClaim, StoredAnswer } from '../lib/change-context.js';
import { requestHook, sendHook } from '../lib/lifecycle-hooks.js';
import { changeContext } from '../lib/request-context.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** 1 to 255 printable ASCII characters (space to tilde), as the contract says. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const METHODS = new Set(['POST', 'PATCH']);
const JSON_TYPE = 'application/json; charset=utf-8';

/** The raw text of each JSON body, kept by the body parser (app.ts) so that its SHA-256 is of the bytes sent. */
const rawBodies = new WeakMap<FastifyRequest, string>();

export function keepRawBody(request: FastifyRequest, text: string): void {
  rawBodies.set(request, text);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route whose status depends on what its change reports: that answer (no payload: no body). */
    answerOf?: (reported: unknown) => { status: number; payload?: unknown; location?: string };
  }
  interface FastifyRequest {
    /** The Idempotency-Key this request holds while it runs: its changes store their answer with themselves. */
    idempotencyClaim: IdempotencyClaim | null;
  }
}

/** The claim a request holds while it runs, and whether its answer was settled. */
/** The claim a request holds, with the answer its change stored. */
type HeldAnswerClaim = HeldClaim & IdempotencyClaim;
const held = new WeakMap<FastifyRequest, { claim: HeldAnswerClaim; settled: boolean }>();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What makes two requests the same: method, route, path parameters, query and the SHA-256 of the body. */
function fingerprintOf(request: FastifyRequest): string {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  const body = sha256(rawBodies.get(request) ?? '');
  return sha256(JSON.stringify([request.method, request.routeOptions.url, request.params, query, body]));
}

/** The 2xx statuses the route declares, and whether each has a body. */
function successesOf(request: FastifyRequest): Array<{ status: number; empty: boolean }> {
  const responses = (request.routeOptions.schema?.response ?? {}) as Record<string, { type?: unknown }>;
  return Object.entries(responses)
    .filter(([status]) => /^2\d\d$/.test(status))
    .map(([status, schema]) => ({ status: Number(status), empty: schema?.type === 'null' }));
}

/**
 * How the route answers a change that reports `value`: its `answerOf`, else
 * its one 2xx status, serialised as the route serialises it. Otherwise (and
 * where the change reports no object) the answer is stored as it is sent, just
 * after the change.
 */
function answerMaker(request: FastifyRequest, reply: FastifyReply): (value: unknown) => StoredAnswer | null {
  const { answerOf } = request.routeOptions.config;
  if (answerOf)
    return (value) => {
      const { status, payload, location = null } = answerOf(value);
      return payload === undefined
        ? { status, contentType: null, location, body: '' }
        : { ...rendered(payload, status), location };
    };
  const successes = successesOf(request);
  if (successes.length !== 1) return () => null;
  const [{ status, empty }] = successes as [{ status: number; empty: boolean }];
  return (value) => {
    if (empty) return { status, contentType: null, location: null, body: '' };
    // A flag or a count is what the service decides by, not the answer: that is stored as it is sent.
    return typeof value === 'object' && value !== null ? rendered(value, status) : null;
  };
  function rendered(payload: unknown, status: number): StoredAnswer {
    const body = String(reply.serializeInput(payload as Record<string, unknown>, String(status)));
    return { status, contentType: JSON_TYPE, location: null, body };
  }
}

/** Whether an answer of `status` is kept: 2xx and 4xx, but not a 429 (a retry may pass) nor an answer nobody read. */
function kept(status: number): boolean {
  return (status >= 200 && status < 300) || (status >= 400 && status < 500 && ![408, 429, 499].includes(status));
}

function headerText(reply: FastifyReply, name: string): string | null {
  const value = reply.getHeader(name);
  return value === undefined ? null : String(value);
}

function sameAnswer(a: StoredAnswer | undefined, b: StoredAnswer): boolean {
  return a?.status === b.status && a.body === b.body && a.contentType === b.contentType && a.location === b.location;
}

export const idempotencyPlugin = fp(async (app: FastifyInstance, opts: { service: IdempotencyService }) => {
  const { service } = opts;
  app.decorateRequest('idempotencyClaim', null);

  // Hooks that wait only for a request that holds a key (lib/lifecycle-hooks.ts).
  app.addHook(
    'preValidation',
    requestHook((request, reply) => {
      if (!METHODS.has(request.method) || !request.routeOptions.url) return;
      const key = request.headers[IDEMPOTENCY_HEADER];
      if (key === undefined) return;
      if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new BadRequestError('invalid_idempotency_key');
      const principal = request.principal;
      // Without a caller there is nobody to scope the key to: the request runs as if it had none.
      if (!principal) return;
      const scope = {
        customerId: principal.customerId,
        caller: principal.auth === 'api_key' ? `api_key:${principal.apiKeyId}` : `user:${principal.userId}`,
        operation: `${request.method} ${request.routeOptions.url}`,
        key,
      };
      return claim(request, reply, scope);
    }),
  );

  async function claim(request: FastifyRequest, reply: FastifyReply, scope: KeyScope): Promise<unknown> {
    const begun = await service.begin(scope, fingerprintOf(request));
    if ('replay' in begun) {
      const { status, contentType, location, body } = begun.replay;
      reply.code(status).header(REPLAYED_HEADER, 'true');
      if (contentType) reply.header('content-type', contentType);
      if (location) reply.header('location', location);
      // No body and no type (a 201 or 204 without content) is sent as Fastify sent it: nothing, not an empty text.
      // Returned: the hook waits until the replay has gone out, so the lifecycle never reaches the handler.
      return contentType === null && body === '' ? reply.send() : reply.send(body);
    }
    const answerOf = answerMaker(request, reply);
    const holding = {
      claim: { ...begun.claim, stored: undefined as StoredAnswer | undefined, answerFor },
      settled: false,
    };
    // Once the answer went out, a late write of the request (one in the background) stores nothing over it.
    function answerFor(value: unknown): StoredAnswer | null {
      return holding.settled ? null : answerOf(value);
    }
    held.set(request, holding);
    request.idempotencyClaim = holding.claim;
  }

  app.addHook(
    'onSend',
    sendHook((request, reply, payload) => {
      const holding = held.get(request);
      if (!holding || holding.settled) return;
      holding.settled = true;
      return store(request, reply, payload, holding.claim);
    }),
  );

  /** Stores the answer going out with its key, or releases the key when the answer is not one to keep. */
  async function store(request: FastifyRequest, reply: FastifyReply, payload: unknown, claim: HeldAnswerClaim) {
    const context = changeContext(request);
    try {
      const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : null;
      if (!kept(reply.statusCode) || (payload != null && text === null)) {
        await service.release(claim, context);
        return;
      }
      // A 204 goes out without body or type, whatever the payload: kept as it goes out.
      const bodiless = reply.statusCode === 204;
      const answer: StoredAnswer = {
        status: reply.statusCode,
        contentType: bodiless ? null : headerText(reply, 'content-type'),
        location: headerText(reply, 'location'),
        body: bodiless ? '' : (text ?? ''),
      };
      // The change stored its answer with itself; anything else (no change, another rendering) is stored now.
      if (!sameAnswer(claim.stored, answer)) {
        if (claim.stored && kept(claim.stored.status) && answer.status < 300)
          request.log.warn({ route: request.routeOptions.url }, 'a change stored another answer than the one sent');
        await service.finish(claim, answer, context);
      }
    } catch (err) {
      // The answer still goes out; the key stays claimed until its lease ends, then a retry runs again.
      request.log.warn({ err }, 'could not store the answer of an Idempotency-Key');
    }
  }

  // An answer that was never sent (the connection went first) keeps no claim.
  app.addHook(
    'onResponse',
    requestHook((request) => {
      const holding = held.get(request);
      if (!holding || holding.settled) return;
      holding.settled = true;
      return service.release(holding.claim, changeContext(request)).catch(() => {});
    }),
  );
});
