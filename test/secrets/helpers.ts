/** What the tests of secrets at rest share: a dump of every column of every table, and the secrets a run made. */
import type { FastifyInstance } from 'fastify';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/database.js';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json } from '../helpers/app.js';

/** Every row of every table of the database (information_schema), as JSON objects with their table. */
export async function dumpDatabase(
  database: Database,
): Promise<Array<{ table: string; row: Record<string, unknown> }>> {
  const tables = await queryRows<{ schema: string; name: string }>(
    database.db,
    sql`SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const rows = [];
  for (const { schema, name } of tables) {
    const found = await queryRows<{ row: Record<string, unknown> }>(
      database.db,
      sql`SELECT to_jsonb(t) AS row FROM ${sql.identifier(schema)}.${sql.identifier(name)} t`,
    );
    rows.push(...found.map(({ row }) => ({ table: `${schema}.${name}`, row })));
  }
  return rows;
}

/** Every object inside `value` (JSON text parsed where it parses) that looks like a private JWK: it has `d`. */
export function privateJwksIn(value: unknown, found: Array<Record<string, unknown>> = []) {
  if (typeof value === 'string' && value.trimStart().startsWith('{')) {
    try {
      privateJwksIn(JSON.parse(value), found);
    } catch {
      // Not JSON: nothing to look into.
    }
  } else if (Array.isArray(value)) {
    for (const item of value) privateJwksIn(item, found);
  } else if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (typeof object.d === 'string') found.push(object);
    for (const item of Object.values(object)) privateJwksIn(item, found);
  }
  return found;
}

/**
 * Enrols TOTP for the caller and answers the pending secret. Sends `current_password` first
 * (the step-up of contract section 19), and without it where the API does not take it yet.
 */
export async function startTotp(app: FastifyInstance, token: string, password: string): Promise<string> {
  const url = '/v1/users/me/mfa/totp';
  let res = await app.inject({ method: 'POST', url, headers: bearer(token), payload: { current_password: password } });
  if (res.statusCode === 400) res = await app.inject({ method: 'POST', url, headers: bearer(token) });
  if (res.statusCode !== 200) throw new Error(`TOTP enrolment failed: ${res.statusCode} ${res.body}`);
  return json(res).secret as string;
}

/** TOTP turned on for the caller (its first code verified): the secret and the recovery codes. */
export async function enableTotp(app: FastifyInstance, token: string, password: string) {
  const secret = await startTotp(app, token, password);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/users/me/mfa/totp/verify',
    headers: bearer(token),
    payload: { code: totpCode(secret) },
  });
  if (res.statusCode !== 200) throw new Error(`TOTP verification failed: ${res.statusCode} ${res.body}`);
  return { secret, recoveryCodes: json(res).recovery_codes as string[] };
}

/** A port nothing listens on (taken, then released): mail to it waits in the outbox. */
export async function closedPort(): Promise<number> {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
