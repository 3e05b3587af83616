/**
 * Security headers on every answer (contract section 12), through helmet:
 * `X-Content-Type-Options: nosniff`, a Content-Security-Policy that the docs
 * (swagger-ui) and the console (Vite build) run under, no `X-Powered-By`. And
 * `Cache-Control: no-store` on every answer to an authenticated request, so no
 * shared cache keeps one caller's data; answers carrying a secret (tokens, a new
 * key) and problem details set it themselves, whoever asks.
 */
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Same origin only, no inline scripts; inline styles for swagger-ui's style attributes. */
const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  baseUri: ["'none'"],
  connectSrc: ["'self'"],
  fontSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  // helmet's default would make browsers fetch the console's files over https from a plain-http deployment.
  upgradeInsecureRequests: null,
};

export const securityHeadersPlugin = fp(async (app: FastifyInstance) => {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    // TLS ends at the operator's proxy, which alone knows whether and for which hosts HTTPS is required.
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
  });
  app.addHook('onSend', async (request, reply) => {
    if (request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined) reply.header('cache-control', 'no-store');
  });
});
