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
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    authenticate(request: FastifyRequest): Promise<void>;
  }
}

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i;
const READS = new Set(['GET', 'HEAD']);
const CHALLENGE_SESSION_PREFIX = 'fgc_';

export const authenticationPlugin = fp(async (app: FastifyInstance, opts: { authenticators: Authenticators }) => {
  app.decorateRequest('principal', null);
  app.decorate('authenticate', async (request: FastifyRequest) => {
    const authorization = request.headers.authorization;
    const apiKey = request.headers['x-api-key'];
    if (authorization !== undefined && apiKey !== undefined) {
      throw new BadRequestError('ambiguous_credentials');
    }
    if (typeof apiKey === 'string' && apiKey.length > 0) {
      request.principal = await opts.authenticators.apiKey(apiKey.trim());
      if (request.principal.readOnly && !READS.has(request.method)) {
        throw new ForbiddenError('read_only_key');
      }
      return;
    }
    if (typeof authorization === 'string') {
      const token = BEARER.exec(authorization)?.[1];
      if (!token)
        throw new UnauthorizedError('invalid_token', 'The Authorization header must be "Bearer <access_token>".');
      if (token.startsWith(CHALLENGE_SESSION_PREFIX)) {
        if (!request.routeOptions.config.mfaSetup)
          throw new UnauthorizedError('invalid_token', 'A challenge session only enrols two-factor codes.');
        request.principal = await opts.authenticators.challengeSession(token);
        return;
      }
      const principal = await opts.authenticators.accessToken(token);
      request.principal = principal;
      if (principal.role === 'VIEWER' && !READS.has(request.method) && !request.routeOptions.config.anyRole) {
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
