/**
 * Resolves the caller of a request from exactly one of its credential headers.
 * Which credentials exist and how they are checked is the services' business;
 * this plugin only reads headers and attaches the Principal.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../errors.js';
import type { Principal } from '../lib/principal.js';

export interface Authenticators {
  accessToken(token: string): Promise<Principal>;
  /** The session of an MFA_SETUP challenge (`fgc_…`). */
  challengeSession(session: string): Promise<Principal>;
  apiKey(key: string): Promise<Principal>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
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

export const authenticationPlugin = fp(async (app: FastifyInstance, opts: { authenticators: Authenticators }) => {
  app.decorateRequest('principal', null);
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
    if (byKey.readOnly && !onlyReads(request)) throw new ForbiddenError('read_only_key');
    if (byToken.role === 'VIEWER' && !onlyReads(request))
      throw new ForbiddenError('insufficient_role', 'A VIEWER only reads: this operation changes something.');
    return byKey;
  }
  app.decorate('authenticate', async (request: FastifyRequest) => {
    const authorization = request.headers.authorization;
    const apiKey = request.headers['x-api-key'];
    if (authorization !== undefined && apiKey !== undefined) {
      if (!request.routeOptions.config.sdkCredentials) throw new BadRequestError('ambiguous_credentials');
      request.principal = await bothCredentials(request, String(authorization), String(apiKey));
      return;
    }
    if (typeof apiKey === 'string' && apiKey.length > 0) {
      request.principal = await opts.authenticators.apiKey(apiKey.trim());
      if (request.principal.readOnly && !onlyReads(request)) {
        throw new ForbiddenError('read_only_key');
      }
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
      if (principal.role === 'VIEWER' && !onlyReads(request) && !request.routeOptions.config.anyRole) {
        throw new ForbiddenError('insufficient_role', 'A VIEWER only reads: this operation changes something.');
      }
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
