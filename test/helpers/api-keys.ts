/** HTTP shorthands for the API key tests. */
import type { FastifyInstance } from 'fastify';
import { count, eq, sql } from 'drizzle-orm';
import { apiKeys, auditEvents } from '../../src/db/schema.js';
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

export function updateKey(app: FastifyInstance, credentials: Credentials, id: string, payload: object) {
  return app.inject({ method: 'PATCH', url: `/v1/api-keys/${id}`, headers: headersFor(credentials), payload });
}

export function rollKey(app: FastifyInstance, credentials: Credentials, id: string, payload?: object) {
  return app.inject({
    method: 'POST',
    url: `/v1/api-keys/${id}/roll`,
    headers: headersFor(credentials),
    ...(payload ? { payload } : {}),
  });
}

export function whoAmI(app: FastifyInstance, key: string) {
  return app.inject({ method: 'GET', url: '/v1/users/me', headers: { 'x-api-key': key } });
}

/** Every key row and the number of audit records, to check that a refused request changed nothing. */
export async function keysSnapshot(database: Database): Promise<string> {
  // last_used_at moves with every use of a key; it is not a change the caller asked for.
  const rows = (await database.db.select().from(apiKeys).orderBy(apiKeys.id)).map(({ lastUsedAt: _, ...row }) => row);
  const [audits] = await database.db.select({ n: count() }).from(auditEvents);
  return JSON.stringify({ rows, audits: audits!.n });
}

/** Makes a key EXPIRED as if its time had come (the API refuses an expiry in the past). */
export async function expireNow(database: Database, id: string): Promise<void> {
  await database.db.update(apiKeys).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(apiKeys.id, id));
}
