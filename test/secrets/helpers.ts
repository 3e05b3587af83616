/** What the tests of secrets at rest share: a dump of every column of every table, and the secrets a run made. */
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/database.js';

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

/** A port nothing listens on (taken, then released): mail to it waits in the outbox. */
export async function closedPort(): Promise<number> {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
