/**
 * A typed client of feegate: the types come from the OpenAPI document
 * (schema.d.ts, `npm run client:generate`), the calls from openapi-fetch.
 *
 *   const feegate = createFeegateClient('https://feegate.example.net', { accessToken: () => session.token });
 *   const { data, error } = await feegate.GET('/v1/api-keys', { params: { query: { size: MAX_PAGE_SIZE } } });
 *
 * `error` is the problem body (RFC 9457) with its `code` when the status is not 2xx.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export { WEBHOOK_EVENT_TYPES } from './event-types.js';
/** The named schemas of the document: `Schemas['ApiKey']`, `Schemas['Problem']`, ... */
export type Schemas = components['schemas'];
export type FeegateClient = Client<paths>;

/**
 * The most a listing serves in one page: a larger `size` is served as this,
 * and `page.size` of the answer says so. Ask for it to take a whole list.
 */
export const MAX_PAGE_SIZE = 1000;

/** A credential, or a function asked before every request (so a renewed token is picked up). */
export type Credential = string | (() => string | undefined | Promise<string | undefined>);

export interface FeegateClientOptions {
  /** Sent as `Authorization: Bearer <access_token>`. */
  accessToken?: Credential;
  /** Sent as `X-Api-Key`. Used when no access token is given. */
  apiKey?: Credential;
  /** Headers for every request. */
  headers?: Record<string, string>;
  /** Another fetch (tests, proxies, retries). */
  fetch?: typeof globalThis.fetch;
  /**
   * Sends a fresh `Idempotency-Key` with every POST and PATCH that has none
   * (default true): a fetch that retries the same request sends the same key,
   * so a retry after a timeout changes nothing twice.
   */
  idempotencyKeys?: boolean;
}

/** A fresh key: 128 random bits as hex (crypto.getRandomValues works in every browser context, randomUUID does not). */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Sets a fresh Idempotency-Key on POST and PATCH requests that do not carry one. */
export const idempotencyKeys: Middleware = {
  onRequest({ request }) {
    if ((request.method === 'POST' || request.method === 'PATCH') && !request.headers.has('idempotency-key'))
      request.headers.set('idempotency-key', newIdempotencyKey());
    return request;
  },
};

async function resolve(credential: Credential | undefined): Promise<string | undefined> {
  return typeof credential === 'function' ? credential() : credential;
}

/** Adds the configured credential to requests that do not carry one of their own. */
function authentication(options: FeegateClientOptions): Middleware {
  return {
    async onRequest({ request }) {
      if (request.headers.has('authorization') || request.headers.has('x-api-key')) return request;
      const token = await resolve(options.accessToken);
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      else {
        const key = await resolve(options.apiKey);
        if (key) request.headers.set('x-api-key', key);
      }
      return request;
    },
  };
}

export function createFeegateClient(baseUrl: string, options: FeegateClientOptions = {}): FeegateClient {
  const client = createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (options.accessToken !== undefined || options.apiKey !== undefined) client.use(authentication(options));
  if (options.idempotencyKeys !== false) client.use(idempotencyKeys);
  return client;
}
