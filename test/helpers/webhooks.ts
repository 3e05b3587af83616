/** Webhook tests: a real HTTP receiver on 127.0.0.1 that the test starts, and HTTP shorthands. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'node:test';
import { count } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { auditEvents, webhookDeliveries, webhookSubscriptions } from '../../src/db/schema.js';
import { type Credentials, headersFor } from './api-keys.js';
import { type Harness, json } from './app.js';
import { assertDeliveredEventsMatch } from './event-schemas.js';
import { waitFor } from './wait.js';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
  at: number;
}

export type Responder = (request: Received, response: http.ServerResponse) => void;

export interface Receiver {
  url: string;
  /** host:port, as WEBHOOK_ALLOWED_HOSTS names it. */
  host: string;
  port: number;
  received: Received[];
  /** How the next requests are answered (default: 204). */
  respond(responder: Responder): void;
  /** Waits until `n` requests have arrived; each must be an event as the map of events describes it. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1, on `port` if given (to come back on the same one after being down). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  let responder: Responder = (_request, response) => response.writeHead(204).end();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        path: request.url ?? '/',
        at: Date.now(),
      };
      received.push(entry);
      responder(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    host: `127.0.0.1:${bound}`,
    port: bound,
    received,
    respond(next) {
      responder = next;
    },
    // A wait, not a time limit: 15 s leaves room for a CI machine running both suites at once.
    async waitFor(n, timeoutMs = 15_000) {
      await waitFor(() => received.length >= n, `expected ${n} deliveries, got ${received.length}`, { timeoutMs });
      assertDeliveredEventsMatch(received.map((request) => request.body));
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Settings of an app that delivers to `receiver` (loopback, allowed by name) without waiting minutes to retry. */
export function deliveringTo(receiver: Receiver, overrides: Partial<Config> = {}): Partial<Config> {
  return {
    webhookWorker: true,
    webhookAllowHttp: true,
    webhookAllowedHosts: [receiver.host],
    webhookRetrySchedule: [200, 200, 200],
    ...overrides,
  };
}

export const SECRET = 'Whsec-Alpha-2026';
export const ALL_KEY_EVENTS = ['API_KEY_CREATED', 'API_KEY_UPDATED', 'API_KEY_ROLLED', 'API_KEY_REVOKED'];

export function createWebhook(app: FastifyInstance, credentials: Credentials, payload: object) {
  return app.inject({ method: 'POST', url: '/v1/webhooks', headers: headersFor(credentials), payload });
}

export function webhookRequest(
  app: FastifyInstance,
  credentials: Credentials,
  method: 'GET' | 'PATCH' | 'DELETE' | 'POST',
  url: string,
  payload?: object,
) {
  return app.inject({ method, url, headers: headersFor(credentials), ...(payload ? { payload } : {}) });
}

/** A subscription of `types` to `url`, created through the API; answers its id. */
export async function subscribe(
  app: FastifyInstance,
  credentials: Credentials,
  url: string,
  types: string[] = ALL_KEY_EVENTS,
  secret = SECRET,
): Promise<string> {
  const response = await createWebhook(app, credentials, {
    notification_url: url,
    notification_type: types,
    secret_key: secret,
  });
  if (response.statusCode !== 201) throw new Error(`subscribe failed: ${response.statusCode} ${response.body}`);
  return response.json().id as string;
}

/** Every subscription and delivery row and the number of audit records, to check that a refused request changed nothing. */
export async function webhooksSnapshot(database: Database): Promise<string> {
  const subscriptions = await database.db.select().from(webhookSubscriptions).orderBy(webhookSubscriptions.id);
  const deliveries = await database.db.select().from(webhookDeliveries).orderBy(webhookDeliveries.id);
  const [audits] = await database.db.select({ n: count() }).from(auditEvents);
  return JSON.stringify({ subscriptions, deliveries, audits: audits!.n });
}

/**
 * Receivers and further starts of the service for delivery tests, closed after each test.
 * Call after useTestApp, so that the harness's own app is closed first.
 */
export function useDeliveryHarness(h: Harness) {
  let receivers: Receiver[] = [];
  let restarted: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(restarted.map((app) => app.close()));
    await Promise.all(receivers.map((r) => r.close()));
    receivers = [];
    restarted = [];
  });
  return {
    /** Another start of the service on the test's database (the harness keeps its first app). */
    async restart(overrides: Partial<Config>): Promise<FastifyInstance> {
      const app = await buildApp({ config: testConfig(overrides), database: h.db.current.database });
      await app.ready();
      restarted.push(app);
      return app;
    },
    async receiver(port?: number): Promise<Receiver> {
      const started = await startReceiver(port);
      receivers.push(started);
      return started;
    },
  };
}

/** The subscription's deliveries as the API lists them (`query` narrows them, e.g. `?status=FAILED`). */
export async function deliveries(app: FastifyInstance, token: string, hook: string, query = '') {
  return json(await webhookRequest(app, { token }, 'GET', `/v1/webhooks/${hook}/deliveries${query}`)).data as Array<
    Record<string, any>
  >;
}

/** The first of the subscription's deliveries in `status`, waited for: the worker reaches it in its own time. */
export async function oneDelivery(app: FastifyInstance, token: string, hook: string, status: string) {
  let found: Record<string, any> | undefined;
  await waitFor(
    async () => {
      found = (await deliveries(app, token, hook)).find((d) => d.status === status);
      return found !== undefined;
    },
    `a ${status} delivery`,
    { timeoutMs: 8000 },
  );
  return found!;
}
