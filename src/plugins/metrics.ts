/**
 * Prometheus metrics, when METRICS_PORT is set: every answer is counted and
 * timed by route, method and status, and the registry (src/lib/metrics.ts) is
 * served at /metrics on its own listener (METRICS_HOST:METRICS_PORT), never on
 * the API's port: scrapers reach it on a private interface, callers never do.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  collectProcessMetrics,
  type GaugeSources,
  httpRequestDuration,
  httpRequests,
  logins,
  registry,
  setGaugeSources,
} from '../lib/metrics.js';
import { onClosedEarly } from '../lib/request-context.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The /metrics listener, or null when METRICS_PORT is not set. */
    metricsServer: Server | null;
  }
}

const LOGIN_ROUTE = '/v1/login';
const LOGIN_OUTCOMES: Record<number, string> = {
  200: 'success',
  401: 'invalid_credentials',
  429: 'throttled',
  503: 'busy',
  499: 'client_closed',
};
const started = Symbol('metrics start');
const counted = Symbol('metrics counted');
type Timed = FastifyRequest & { [started]?: number; [counted]?: true };

function loginOutcome(status: number): string {
  return LOGIN_OUTCOMES[status] ?? (status < 500 ? 'invalid_request' : 'error');
}

function record(request: Timed, status: number): void {
  if (request[counted]) return;
  request[counted] = true;
  // The route's pattern, not the path: ids must not become label values.
  const route = request.routeOptions.url ?? 'unmatched';
  const labels = { route, method: request.method, status: String(status) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, (performance.now() - (request[started] ?? performance.now())) / 1000);
  if (route === LOGIN_ROUTE && request.method === 'POST') logins.inc({ outcome: loginOutcome(status) });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export const metricsPlugin = fp(async (app: FastifyInstance, opts: { sources: GaugeSources }) => {
  const { metricsPort, metricsHost } = app.config;
  app.decorate('metricsServer', null);
  if (metricsPort === undefined) return;

  collectProcessMetrics();
  setGaugeSources(opts.sources);
  // A request whose connection closes before its answer is counted once, as 499
  // (the client hung up) or 408 (it did not arrive in time), whatever follows.
  app.addHook('onRequest', async (request: Timed, reply) => {
    request[started] = performance.now();
    onClosedEarly(request, reply, (status) => record(request, status));
  });
  app.addHook('onResponse', async (request, reply) => record(request, reply.statusCode));

  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: Error) => {
        app.log.error({ err }, 'could not collect metrics');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await listen(server, metricsPort, metricsHost);
  app.metricsServer = server;
  app.log.info({ address: server.address() }, 'metrics served at /metrics');
  app.addHook('onClose', async () => {
    setGaugeSources({});
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
