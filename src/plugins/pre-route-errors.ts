/**
 * Errors raised before any route runs, answered as problem details like every
 * other error (docs/api.md#conventions), never as the framework's or Node's
 * own JSON:
 * - requests Node's HTTP parser refuses (malformed: 400, headers too large: 431)
 *   and requests that did not fully arrive within REQUEST_TIMEOUT_SECONDS (408):
 *   written straight to the socket, which is then closed;
 * - a path segment longer than the router's 100 characters (414 uri_too_long)
 *   and undecodable percent-encoding (400 malformed_url);
 * - a known path with a method it does not have (405 with `Allow`, RFC 9110),
 *   and unknown paths (404).
 * Echoed input is cut short (see clip()).
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type {
  FastifyError,
  FastifyHttpOptions,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { markTimedOut } from '../lib/request-context.js';
import { clip, problemBody, requestPath, sendProblem, toAppError } from './problem-details.js';

/** Idle keep-alive connections are closed after this long (docs/production.md#a-reverse-proxy-in-front). */
export const KEEP_ALIVE_TIMEOUT_MS = 5000;
/** How often Node looks for requests past their deadline: a late one is answered within this of it. */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** Answers a request the HTTP parser refused or gave up on, on the raw socket, and closes it. */
function onClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new AppError('request_timeout')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('request_header_fields_too_large')
        : new AppError('malformed_request');
  // A request already handed to the app is logged with its id when its connection closes (client-closed.ts).
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (error.status === 408) markTimedOut(socket);
  if (!inFlight) this.log.info({ code: error.code, status: error.status }, 'request refused by the HTTP parser');
  // Write only where it cannot corrupt an answer already under way (as Node itself does).
  if (socket.writable && !inFlight?.headersSent) {
    const requestId = randomUUID();
    const body = JSON.stringify(problemBody(error, requestId));
    socket.write(
      `HTTP/1.1 ${error.status} ${error.title}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

/** The router's own errors (it has not found a route yet). */
function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const answer =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('uri_too_long')
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError('malformed_url')
        : toAppError(error);
  request.log.info({ code: answer.code, status: answer.status }, 'request refused');
  // No route means no hooks (helmet, the request id header): what every answer carries.
  return sendProblem(
    request,
    reply.headers({ 'x-content-type-options': 'nosniff', 'x-request-id': String(request.id) }),
    answer,
  );
}

/** Fastify's server options for timeouts and the errors above. */
export function serverOptions(config: Config) {
  const requestTimeout = config.requestTimeoutSeconds * 1000;
  return {
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // Node's defaults check deadlines every 30 s and allow 60 s for headers alone.
    http: { requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    clientErrorHandler: onClientError,
    frameworkErrors: onFrameworkError,
  } satisfies Partial<FastifyHttpOptions<Server>>;
}

/** A route's URL pattern as a regular expression over paths (`:id` is one segment, `*` the rest). */
function patternOf(url: string): RegExp {
  const segments = url.split('/').map((segment) => {
    if (segment === '*') return '.*';
    if (segment.startsWith(':')) return '[^/]+';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${segments.join('/')}$`);
}

/** A route URL as routed: its pattern, its methods, and how many of its segments are literal. */
interface RouteShape {
  pattern: RegExp;
  methods: Set<string>;
  literalSegments: number;
}

const literalSegmentsOf = (url: string) => url.split('/').filter((s) => s !== '*' && !s.startsWith(':')).length;

/**
 * The methods of the route that matches `path` itself: among the URLs whose
 * pattern matches, only the most literal ones (`/v1/users/me`, never its
 * parametric neighbour `/v1/users/:id`), so `Allow` names only real methods.
 */
function methodsOf(routes: Iterable<RouteShape>, path: string): Set<string> {
  let best = -1;
  const methods = new Set<string>();
  for (const route of routes) {
    if (!route.pattern.test(path) || route.literalSegments < best) continue;
    if (route.literalSegments > best) methods.clear();
    best = route.literalSegments;
    for (const m of route.methods) methods.add(m);
  }
  return methods;
}

/**
 * 404 for unknown paths; 405 with `Allow` for a known path asked with another
 * method; a static path wins over a parametric route with that method
 * (`PATCH /v1/users/me` is a 405, not `PATCH /v1/users/{id}` with id "me"). Register before any route. Routing comes before the body: the answer
 * is given before Fastify reads or judges one (empty JSON, a media type it does
 * not take, a QUERY without Content-Type), so a client's body never turns a
 * wrong path into a 400 or 415.
 */
export const preRouteErrorsPlugin = fp(async (app: FastifyInstance) => {
  const allowed = new Map<string, RouteShape>();
  app.addHook('onRoute', (route) => {
    const entry = allowed.get(route.url) ?? {
      pattern: patternOf(route.url),
      methods: new Set<string>(),
      literalSegments: literalSegmentsOf(route.url),
    };
    for (const method of [route.method].flat()) entry.methods.add(method);
    allowed.set(route.url, entry);
    if (/[:*]/.test(route.url)) route.onRequest = [staticPathWins, ...[route.onRequest ?? []].flat()];
  });
  // Matched as routed (without /api), told as the client wrote it.
  const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? request.url;
  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const methods = methodsOf(allowed.values(), pathOf(request));
    if (methods.size === 0 || methods.has(request.method)) {
      return sendProblem(
        request,
        reply,
        new AppError('not_found', { detail: `No route ${request.method} ${clip(requestPath(request))}.` }),
      );
    }
    const allow = [...methods].sort().join(', ');
    request.log.info({ code: 'method_not_allowed', status: 405 }, 'request refused');
    return sendProblem(
      request,
      reply,
      new AppError('method_not_allowed', { detail: `This path accepts ${allow} only.`, headers: { allow } }),
    );
  };
  app.setNotFoundHandler(notFound);
  // The router gives a path a parametric route when its static route lacks the method: refused first on every
  // parametric route (after the global hooks: headers, metrics, rate limits; before authentication).
  const staticPathWins: onRequestHookHandler = (request, reply, done) => {
    const own = allowed.get(pathOf(request));
    if (own === undefined || own.methods.has(request.method)) done();
    else notFound(request, reply);
  };
  // The 404 route's handler would run only after its body was parsed: this hook answers
  // first. preParsing comes after the onRequest hooks (metrics, rate limits) and before
  // the body parser; a callback hook that does not call `done` ends the lifecycle here.
  app.addHook('preParsing', (request, reply, _payload, done) => {
    if (request.is404) notFound(request, reply);
    else done();
  });
});
