/**
 * Builds the Fastify application around a database: plugins for infrastructure,
 * one route plugin per feature. Listening and signals live in server.ts.
 */
import { activeTraceIds, tracingOn } from './lib/tracing.js';
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { apiKeysRoutes } from './features/api-keys/api-keys-routes.js';
import { auditRoutes } from './features/audit/audit-routes.js';
import { authRoutes } from './features/auth/auth-routes.js';
import { changeRequestsRoutes } from './features/change-requests/change-requests-routes.js';
import { feePlansRoutes } from './features/fee-plans/fee-plans-routes.js';
import { feeQuotesRoutes } from './features/fee-quotes/fee-quotes-routes.js';
import { healthRoutes } from './features/health/health-routes.js';
import { merchantsRoutes } from './features/merchants/merchants-routes.js';
import { webhooksRoutes } from './features/webhooks/webhooks-routes.js';
import { usersRoutes } from './features/users/users-routes.js';
import { withoutBasePath } from './lib/base-path.js';
import { sharedSerializers } from './lib/compiled-schemas.js';
import { keyVerifications, countOutcome } from './lib/metrics.js';
import { REDACTED, redactUrl } from './lib/redact-url.js';
import { authenticationPlugin } from './plugins/authentication.js';
import { clientClosedPlugin } from './plugins/client-closed.js';
import { metricsPlugin } from './plugins/metrics.js';
import { consolePlugin } from './plugins/console.js';
import { openapiPlugin } from './plugins/openapi.js';
import { preRouteErrorsPlugin, serverOptions } from './plugins/pre-route-errors.js';
import { problemDetailsPlugin } from './plugins/problem-details.js';
import { idempotencyPlugin, keepRawBody } from './plugins/idempotency.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { securityHeadersPlugin } from './plugins/security-headers.js';
import { validationPlugin } from './plugins/validation.js';
import { createServices, type Services } from './services.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    services: Services;
  }
}

export interface BuildAppOptions {
  config: Config;
  database: Database;
  /** Close the database with the app (the server does; tests share one database across apps). */
  ownsDatabase?: boolean;
  /** A ready logger (the server's); otherwise one is made from the config. */
  loggerInstance?: FastifyBaseLogger;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.password',
  '*.api_key',
  '*.access_token',
  '*.refresh_token',
  '*.secret_key',
  '*.new_password',
  '*.current_password',
  '*.temporary_password',
  '*.code',
  '*.secret',
  '*.session',
  '*.recovery_codes',
];

/**
 * A request as logged: Fastify's fields, with `url` as routed, so `/api/v1/login`
 * and `/v1/login` are one route in the logs, `original_url` when the caller wrote
 * it otherwise (src/lib/base-path.ts), and secrets in either redacted
 * (src/lib/redact-url.ts).
 */
function requestForLog(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    ...(request.originalUrl === request.url ? {} : { original_url: redactUrl(request.originalUrl) }),
    version: request.headers?.['accept-version'] as string | undefined,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: REDACTED },
    serializers: { req: requestForLog },
    // While tracing is on, each line names the span it was written in, so logs join traces.
    ...(tracingOn() ? { mixin: activeTraceIds } : {}),
  };
}

/**
 * Fastify (since 5.12) ignores a bare number of hops, so a count becomes the
 * function proxy-addr asks of each address from the socket leftwards: the first
 * `hops` are proxies, the next one is the client.
 */
function trustProxyOption(trust: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: loggerOptions(config) }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    ...serverOptions(config),
    rewriteUrl: withoutBasePath,
    schemaController: sharedSerializers,
    // Accept a caller's X-Request-Id when it is harmless, so logs join up across services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only: a text/plain body is a 415, not a string.
  app.removeContentTypeParser(['text/plain']);
  // Clients send Content-Type: application/json on every request, DELETE and logout included:
  // an empty body so declared is no body, and an operation that needs one refuses it as validation_failed.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // The text is kept for the SHA-256 of an Idempotency-Key request (src/plugins/idempotency.ts).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body === '') return done(null, undefined);
    keepRawBody(request, body);
    parseJson(request, body, done);
  });

  const services = createServices(config, database, app.log);
  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('services', services);
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  app.addHook('onClose', async () => {
    await services.stop();
    if (options.ownsDatabase) await database.close();
  });

  await app.register(validationPlugin);
  await app.register(problemDetailsPlugin);
  await app.register(preRouteErrorsPlugin);
  await app.register(clientClosedPlugin);
  await app.register(securityHeadersPlugin);
  await app.register(metricsPlugin, {
    sources: {
      loginQueueDepth: () => services.hasher.queued(),
      listingPagesWaiting: () => services.listingPagePermits.waiting(),
      databasePool: () => database.poolStats?.(),
      webhookQueue: () => services.webhookQueue(),
    },
  });
  await app.register(openapiPlugin);
  await app.register(authenticationPlugin, {
    authenticators: {
      accessToken: (token) => services.auth.authenticateAccessToken(token),
      challengeSession: (session) => services.auth.authenticateChallengeSession(session),
      apiKey: (key) => countOutcome(keyVerifications, services.apiKeys.authenticate(key)),
    },
  });
  await app.register(rateLimitPlugin, {
    counters: services.rateLimits,
    anonymousPerMinute: config.rateLimitAnonymousPerMinute,
  });
  await app.register(idempotencyPlugin, { service: services.idempotency });
  await app.register(healthRoutes);
  await app.register(authRoutes);
  await app.register(merchantsRoutes);
  await app.register(feePlansRoutes);
  await app.register(changeRequestsRoutes);
  await app.register(feeQuotesRoutes);
  await app.register(apiKeysRoutes);
  await app.register(auditRoutes);
  await app.register(webhooksRoutes);
  await app.register(usersRoutes);
  await app.register(consolePlugin);
  await services.start();
  return app;
}
