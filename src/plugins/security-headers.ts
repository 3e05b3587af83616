/**
 * Security headers (docs/production.md#headers), through helmet:
 * `X-Content-Type-Options: nosniff`, a Content-Security-Policy that the docs
 * (swagger-ui) and the console (Vite build) run under, no `X-Powered-By`. And
 * `Cache-Control: no-store` on every answer to an authenticated request, so no
 * shared cache keeps one caller's data; answers carrying a secret (tokens, a new
 * key) and problem details set it themselves, whoever asks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

/** Same origin only, no inline script or style. */
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
  styleSrc: ["'self'"],
  // helmet's default would make browsers fetch the console's files over https from a plain-http deployment.
  upgradeInsecureRequests: null,
};

/** swagger-ui (/docs) sets style attributes: its pages alone allow inline styles. */
const DOCS_CSP_DIRECTIVES = { ...CSP_DIRECTIVES, styleSrc: ["'self'", "'unsafe-inline'"] };

const helmetOptions = (directives: typeof CSP_DIRECTIVES): HelmetOptions => ({
  contentSecurityPolicy: { useDefaults: false, directives },
  // TLS ends at the operator's proxy, which alone knows whether and for which hosts HTTPS is required.
  strictTransportSecurity: false,
  xFrameOptions: { action: 'deny' },
});

/**
 * The headers helmet sets, computed once. They depend on no request (no nonces,
 * no per-route policy), and @fastify/helmet rebuilt helmet's middleware (parsing
 * the whole policy) on every request, which cost more than the rest of a cheap
 * request (docs/performance.md).
 */
function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const collector = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)({} as IncomingMessage, collector as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return headers;
}

const docsHeaders = helmetHeaders(helmetOptions(DOCS_CSP_DIRECTIVES));

/**
 * An onRequest hook for the documentation's routes alone (src/plugins/openapi.ts adds it in their
 * own context): swagger-ui's pages get the policy that allows its inline styles, every other
 * answer the strict one, whatever spelling its path came in.
 */
export const allowInlineStyles: onRequestHookHandler = (_request, reply, done) => {
  reply.headers(docsHeaders);
  done();
};

export const securityHeadersPlugin = fp(async (app: FastifyInstance) => {
  const headers = helmetHeaders(helmetOptions(CSP_DIRECTIVES));
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined)
      reply.header('cache-control', 'no-store');
    done(null, payload);
  });
});
