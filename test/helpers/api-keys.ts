/** HTTP shorthands for the API key tests, a limited key to start from, and what a refused escalation answers. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { count, eq, sql } from 'drizzle-orm';
import { apiKeys, auditEvents } from '../../src/db/schema.js';
import type { Database } from '../../src/db/database.js';
import type { Config } from '../../src/config.js';
import { type Harness, type Injected, json } from './app.js';
import { customerSession, issueKey, type World } from './fixtures.js';

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

/** An instant `days` from now, as the API writes one. */
export const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** The rate limit of limitedKeySession's key. */
export const LIMITED_KEY_RATE = { limit: 100, window_seconds: 60 };

/** A customer key made with a token: it expires in 30 days and may make 100 requests a minute. */
export async function limitedKeySession(h: Harness, overrides: Partial<Config> = {}) {
  const { app, world, token } = await customerSession(h, overrides);
  const expiresAt = inDays(30);
  const res = await createKey(
    app,
    { token },
    { user: 'ci@alpha.test', customer_id: world.customerId, expires_at: expiresAt, rate_limit: LIMITED_KEY_RATE },
  );
  assert.equal(res.statusCode, 201, res.body);
  const key = json(res) as { id: string; api_key: string };
  return { app, world, token, key, creds: { key: key.api_key }, expiresAt };
}

/** A key asking for more than its caller has: 403 key_escalation, as a problem document. */
export function assertEscalation(res: Injected, what: string): void {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
  assert.equal(json(res).code, 'key_escalation', what);
  assert.match(String(res.headers['content-type']), /application\/problem\+json/);
}

/** One DELETED and one EXPIRED key of a new customer session's customer. */
export async function deletedAndExpiredKeys(h: Harness) {
  const { app, world, token } = await customerSession(h);
  const deleted = await issueKey(app, { user: 'a@alpha.test', customerId: world.customerId });
  const expired = await issueKey(app, { user: 'b@alpha.test', customerId: world.customerId });
  await deleteKey(app, { token }, deleted.id);
  await expireNow(h.db.current.database, expired.id);
  return { app, token, ids: [deleted.id, expired.id] };
}

/** A key of the first customer's first merchant (pos@) and one of its second (pos2@): a merchant's own, and its sibling's. */
export async function merchantAndSiblingKeys(app: FastifyInstance, world: World) {
  const own = (merchant: number, user: string) =>
    issueKey(app, { user, customerId: world.customerId, merchantId: world.merchantIds[merchant]! });
  return { mine: await own(0, 'pos@alpha.test'), sibling: await own(1, 'pos2@alpha.test') };
}
