/**
 * The platform's base URL is `https://<host>/api`, so its integrations call
 * `/api/v1/...`. Every operation answers there exactly as at its own path: the
 * prefix is taken off before routing (Fastify's `rewriteUrl`), so the two are
 * one route to validation, rate limits, metrics and logs. Only versioned paths
 * get it (and the platform SDK's `/auth/users`): `/health`, `/ready`, `/docs`, `/console` and `/.well-known/jwks.json`
 * stay at the root, and `/api/health` is a 404.
 */
export const API_BASE_PATH = '/api';

const PREFIXED = new RegExp(`^${API_BASE_PATH}(?=/v[12]/|/auth/)`);

/** The URL as routed: `/api/v1/login?x` becomes `/v1/login?x`; anything else is unchanged. */
export function withoutBasePath(request: { url?: string }): string {
  const url = request.url ?? '/';
  return url.replace(PREFIXED, '');
}
