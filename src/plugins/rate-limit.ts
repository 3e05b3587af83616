/**
 * Rate limits (docs/key-lifecycle.md#rate-limits-and-redis) through
 * @fastify/rate-limit: an API key with a `rate_limit` is held to it on every
 * route, counted per roll chain (a rolled key's successor goes on with its
 * count); login and refresh are held per client address. Everything else,
 * including keys without a limit, is let through before any counting (no Redis
 * round trip on the hot path). Counters are shared through Redis when
 * configured (lib/shared-counters.ts). Answers carry RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset; a refusal is a 429 rate_limited
 * problem with Retry-After.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { RateLimitedError } from '../errors.js';
import { requestHook } from '../lib/lifecycle-hooks.js';
import type { SharedCounters } from '../lib/shared-counters.js';

/** Unauthenticated routes limited per client address. */
const ANONYMOUS_LIMITED = new Set([
  '/v1/login',
  '/v1/login/refresh',
  '/v1/login/challenge',
  '/v1/login/forgot-password',
  '/v1/login/confirm-forgot-password',
]);

interface Limit {
  key: string;
  max: number;
  windowMs: number;
}

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: { counters: SharedCounters; anonymousPerMinute: number }) => {
    const limits = new WeakMap<FastifyRequest, Limit>();

    function limitOf(request: FastifyRequest): Limit | undefined {
      const principal = request.principal;
      if (principal?.rateLimit && principal.apiKeyId) {
        return {
          key: `key:${principal.rateLimit.counter}`,
          max: principal.rateLimit.limit,
          windowMs: principal.rateLimit.windowSeconds * 1000,
        };
      }
      if (!principal && opts.anonymousPerMinute > 0 && ANONYMOUS_LIMITED.has(request.routeOptions.url ?? '')) {
        return { key: `ip:${request.ip}`, max: opts.anonymousPerMinute, windowMs: 60_000 };
      }
      return undefined;
    }

    await app.register(rateLimit, {
      // Not on every route by itself: the hook below calls it only for a request it counts.
      global: false,
      enableDraftSpec: true,
      store: opts.counters.storeClass,
      keyGenerator: (request) => limits.get(request)!.key,
      max: (request) => limits.get(request)!.max,
      timeWindow: (request) => limits.get(request)!.windowMs,
      errorResponseBuilder: (_request, context) => new RateLimitedError(Math.max(1, Math.ceil(context.ttl / 1000))),
    });
    const count = app.rateLimit();
    // The library's own global hook makes promises for every request, counted or not (lib/lifecycle-hooks.ts).
    const countLimited = requestHook((request, reply) => {
      const limit = limitOf(request);
      if (!limit) return;
      limits.set(request, limit);
      return count.call(app, request, reply);
    });
    // After each route's own onRequest hooks, as the library's global hook runs, so the caller is known.
    app.addHook('onRoute', (route) => {
      route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), countLimited];
    });
  },
);
