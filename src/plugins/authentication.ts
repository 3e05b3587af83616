/**
 * Resolves the caller of a request from exactly one of its credential headers,
 * and decides, before any handler reads anything, whether it may call this
 * operation: from this address, with this permission (contract section 22).
 * Which credentials exist and how they are checked is the services' business;
 * this plugin only reads headers and attaches the Principal.
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, BadRequestError, ForbiddenError, UnauthorizedError } from '../errors.js';
import { isAllowedAddress } from '../lib/allowed-ips.js';
import { permissionsOf, type RoutePermission } from '../lib/permissions.js';
import type { Principal } from '../lib/principal.js';

export interface Authenticators {
  accessToken(token: string): Promise<Principal>;
  /** The session of an MFA_SETUP challenge (`fgc_…`). */
  challengeSession(session: string): Promise<Principal>;
  apiKey(key: string): Promise<Principal>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What the operation needs (src/lib/permissions.ts): every authenticated
     * route declares it, or the app does not start. The OpenAPI document shows
     * it as `x-feegate-permission`.
     */
    permission?: RoutePermission;
    /** A change any login may make to itself (its password, its two-factor codes, logout): a VIEWER too. */
    anyRole?: boolean;
    /** Enrolment of two-factor codes: the session of an MFA_SETUP challenge may stand in for an access token. */
    mfaSetup?: boolean;
    /** The platform SDK's path: X-API-KEY and Authorization together, both checked, one customer. */
    sdkCredentials?: boolean;
    /** A POST that changes nothing (a fee quote): read-only keys and VIEWERs may call it as they may GET. */
    changesNothing?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    authenticate(request: FastifyRequest): Promise<void>;
  }
}

/** `Bearer <token>`, or the token alone (the platform's gateway takes both). */
const BEARER = /^(?:Bearer[ ]+)?([^\s]+)[ ]*$/i;
const READS = new Set(['GET', 'HEAD']);
const CHALLENGE_SESSION_PREFIX = 'fgc_';
/** Whether the request only reads: a GET or HEAD, or a route that changes nothing whatever its method. */
const onlyReads = (request: FastifyRequest) =>
  READS.has(request.method) || request.routeOptions.config.changesNothing === true;

/** Whether a route authenticates its caller (its onRequest is `authenticate`, alone or among others). */
function isAuthenticated(route: RouteOptions, authenticate: unknown): boolean {
  const hooks = route.onRequest;
  return Array.isArray(hooks) ? hooks.includes(authenticate as never) : hooks === authenticate;
}

/**
 * The one check of what a caller may do here: a key from outside its
 * allowed_ips never learns more than that; then the permission the route
 * declares, against the key's or the role's (a login keeps its role's code).
 */
function authorise(request: FastifyRequest, principal: Principal): void {
  if (principal.allowedRanges && !isAllowedAddress(request.ip, principal.allowedRanges))
    throw new ForbiddenError('ip_not_allowed');
  if (principal.readOnly && !onlyReads(request)) throw new ForbiddenError('read_only_key');
  const needed = request.routeOptions.config.permission;
  if (needed === undefined || needed === 'none' || permissionsOf(principal).has(needed)) return;
  const byRole = principal.auth === 'token';
  throw new AppError(byRole ? 'insufficient_role' : 'insufficient_permissions', {
    detail: byRole
      ? `Your role (${principal.role}) does not hold ${needed}, which this operation needs: a VIEWER only reads.`
      : `This API key does not hold ${needed}, which this operation needs.`,
    extensions: { required_permission: needed },
  });
}

export const authenticationPlugin = fp(async (app: FastifyInstance, opts: { authenticators: Authenticators }) => {
  app.decorateRequest('principal', null);
  // Fail closed at start: an operation that forgot its permission would otherwise be open to every key.
  app.addHook('onRoute', (route) => {
    if (!isAuthenticated(route, app.authenticate)) return;
    const { permission } = route.config ?? {};
    if (permission === undefined)
      throw new Error(
        `${route.method} ${route.url} authenticates its caller but declares no permission: add config.permission (src/lib/permissions.ts).`,
      );
    // The OpenAPI document reads the route's schema: the declaration goes there as its extension.
    if (route.schema) (route.schema as Record<string, unknown>)['x-feegate-permission'] = permission;
  });
  /** The SDK's pair: the key is the caller; the token must be valid, of the same customer, and allowed to write. */
  async function bothCredentials(request: FastifyRequest, authorization: string, apiKey: string): Promise<Principal> {
    const token = BEARER.exec(authorization)?.[1];
    if (!token || token.startsWith(CHALLENGE_SESSION_PREFIX)) throw new UnauthorizedError('invalid_token');
    const [byKey, byToken] = await Promise.all([
      opts.authenticators.apiKey(apiKey.trim()),
      opts.authenticators.accessToken(token),
    ]);
    if (byKey.customerId !== byToken.customerId)
      throw new UnauthorizedError('invalid_token', 'The API key and the access token are of different customers.');
    authorise(request, byKey);
    if (byToken.role === 'VIEWER' && !onlyReads(request))
      throw new ForbiddenError('insufficient_role', 'A VIEWER only reads: this operation changes something.');
    return byKey;
  }
  // Both credentials are ambiguous on any request (a login, a refresh too), not only where a caller is
  // authenticated: only the SDK's routes take the pair (contract section 1).
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers.authorization === undefined || request.headers['x-api-key'] === undefined) return done();
    done(request.routeOptions.config?.sdkCredentials ? undefined : new BadRequestError('ambiguous_credentials'));
  });
  app.decorate('authenticate', async (request: FastifyRequest) => {
    const authorization = request.headers.authorization;
    const apiKey = request.headers['x-api-key'];
    if (authorization !== undefined && apiKey !== undefined) {
      // Only the SDK's routes get here with both (the onRequest hook above).
      request.principal = await bothCredentials(request, String(authorization), String(apiKey));
      return;
    }
    if (typeof apiKey === 'string' && apiKey.length > 0) {
      request.principal = await opts.authenticators.apiKey(apiKey.trim());
      authorise(request, request.principal);
      return;
    }
    if (typeof authorization === 'string') {
      const token = BEARER.exec(authorization)?.[1];
      if (!token)
        throw new UnauthorizedError(
          'invalid_token',
          'The Authorization header must be "Bearer <access_token>" or the access token alone.',
        );
      if (token.startsWith(CHALLENGE_SESSION_PREFIX)) {
        if (!request.routeOptions.config.mfaSetup)
          throw new UnauthorizedError('invalid_token', 'A challenge session only enrols two-factor codes.');
        request.principal = await opts.authenticators.challengeSession(token);
        return;
      }
      const principal = await opts.authenticators.accessToken(token);
      request.principal = principal;
      // The role rule stricter than permissions: a VIEWER changes nothing but its own login's settings.
      if (principal.role === 'VIEWER' && !onlyReads(request) && !request.routeOptions.config.anyRole) {
        throw new ForbiddenError('insufficient_role', 'A VIEWER only reads: this operation changes something.');
      }
      authorise(request, principal);
      return;
    }
    throw new UnauthorizedError('missing_credentials');
  });
});

/** The caller of an authenticated route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError('missing_credentials');
  return request.principal;
}
