/**
 * A real database per test file: a fresh PostgreSQL database on the server of
 * TEST_DATABASE_URL when it is set, otherwise an in-memory PGlite. Both migrated
 * with the same migrations the service runs.
 */
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach } from 'node:test';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.js';
import { sql } from 'drizzle-orm';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || undefined;
export const ON_POSTGRES = TEST_DATABASE_URL !== undefined;

export interface TestDatabase {
  database: Database;
  /** The URL of the database, on PostgreSQL (for second instances and the CLI). */
  url: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const database = await openDatabase({ dataDir: 'memory://' });
    await database.migrate();
    return { database, url: undefined, drop: () => database.close() };
  }
  const name = `feegate_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 10 });
  await database.migrate();
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close();
      const cleanup = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

const TABLES = [
  'audit_events',
  'merchant_payment_plans',
  'payment_plans',
  'auth_tokens',
  'auth_sessions',
  'api_keys',
  'users',
  'merchants',
  'customers',
];

export async function resetDatabase(database: Database): Promise<void> {
  await database.db.execute(sql.raw(`TRUNCATE ${TABLES.join(', ')} RESTART IDENTITY CASCADE`));
}

/** One database for the file, emptied before each test. */
export function useTestDatabase(): { readonly current: TestDatabase } {
  let current: TestDatabase | undefined;
  before(async () => {
    current = await createTestDatabase();
  });
  beforeEach(async () => {
    await resetDatabase(current!.database);
  });
  after(async () => {
    await current?.drop();
  });
  return {
    get current() {
      if (!current) throw new Error('test database not ready');
      return current;
    },
  };
}
