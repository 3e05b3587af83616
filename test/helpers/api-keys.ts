/** HTTP shorthands for the API key tests. */
import type { FastifyInstance } from 'fastify';
import { count } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema.js';
import type { Database } from '../../src/db/database.js';

export type Credentials = { token: string } | { key: string };

export function headersFor(credentials: Credentials): Record<string, string> {
  return 'token' in credentials ? { authorization: `Bearer ${credentials.token}` } : { 'x-api-key': credentials.key };
}

export function createKey(app: FastifyInstance, credentials: Credentials, payload: object) {
  return app.inject({ method: 'POST', url: '/v1/api-keys', headers: headersFor(credentials), payload });
}

export function listKeys(app: FastifyInstance, credentials: Credentials, query = '') {
  return app.inject({ method: 'GET', url: `/v1/api-keys${query}`, headers: headersFor(credentials) });
}

export function deleteKey(app: FastifyInstance, credentials: Credentials, id: string) {
  return app.inject({ method: 'DELETE', url: `/v1/api-keys/${id}`, headers: headersFor(credentials) });
}

export async function keyCount(database: Database): Promise<number> {
  const [row] = await database.db.select({ n: count() }).from(apiKeys);
  return row!.n;
}
