/**
 * A real database per test file: a fresh PostgreSQL database on the server of
 * TEST_DATABASE_URL when it is set, otherwise an in-memory PGlite. Both migrated
 * with the same migrations the service runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { after, before, beforeEach } from 'node:test';
import pg from 'pg';
import {
  findInPackage,
  MIGRATIONS_FOLDER,
  openDatabase,
  pgliteDatabase,
  type Database,
} from '../../src/db/database.js';
import { PGLITE_TEMPLATE, PGLITE_VERSION, startPgliteWorker } from '../../src/db/pglite.js';

import { getTableName, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import * as schema from '../../src/db/schema.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || undefined;
export const ON_POSTGRES = TEST_DATABASE_URL !== undefined;

export interface TestDatabase {
  database: Database;
  /** The URL of the database, on PostgreSQL (for second instances and the CLI). */
  url: string | undefined;
  drop(): Promise<void>;
}

/**
 * Booting PGlite (its initdb) takes seconds; loading a snapshot of a migrated
 * database takes a fraction. The snapshot is kept in the temp directory, keyed by
 * the migrations and the PGlite version (a new build must not load an older
 * one's snapshot), and shared by every test process.
 */
/** From the shipped initdb template when there is one: seconds faster, and no second PostgreSQL in memory. */
async function emptyPglite(): Promise<PGlite> {
  const template = findInPackage(PGLITE_TEMPLATE);
  return PGlite.create(template ? { loadDataDir: new Blob([brotliDecompressSync(readFileSync(template))]) } : {});
}

async function migratedPgliteSnapshot(): Promise<Blob> {
  const hash = createHash('sha256').update(PGLITE_VERSION);
  for (const file of readdirSync(MIGRATIONS_FOLDER, { recursive: true }).map(String).sort()) {
    const full = path.join(MIGRATIONS_FOLDER, file);
    if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
  }
  const snapshot = path.join(os.tmpdir(), `feegate-test-pglite-${hash.digest('hex').slice(0, 16)}.tar.gz`);
  if (!existsSync(snapshot)) {
    const client = await emptyPglite();
    await pgliteDatabase(client).migrate();
    const blob = await client.dumpDataDir('gzip');
    await client.close();
    // Write then rename: concurrent test processes never read half a file.
    const partial = `${snapshot}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await blob.arrayBuffer()));
    renameSync(partial, snapshot);
  }
  return new Blob([readFileSync(snapshot)]);
}

/** `migrated: false`: an empty database, for tests that migrate it step by step themselves. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  if (!TEST_DATABASE_URL && !migrated) {
    const database = pgliteDatabase(await emptyPglite());
    return { database, url: undefined, drop: () => database.close() };
  }
  if (!TEST_DATABASE_URL) {
    const snapshot = await migratedPgliteSnapshot();
    // PGlite in this thread by default (fastest); TEST_PGLITE_WORKER=1 runs it as the service does, in its worker thread.
    const client = process.env.TEST_PGLITE_WORKER
      ? await startPgliteWorker('memory://', new Uint8Array(await snapshot.arrayBuffer()))
      : await PGlite.create({ loadDataDir: snapshot });
    const database = pgliteDatabase(client);
    await database.migrate(); // a no-op on the snapshot; keeps the migrator honest
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
  if (migrated) await database.migrate();
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

/** Every table of src/db/schema.ts, so that a table added there is emptied too. */
export const RESET_TABLES: readonly string[] = Object.values(schema as Record<string, unknown>)
  .filter((value): value is PgTable => is(value, PgTable))
  .map((table) => getTableName(table));

export async function resetDatabase(database: Database): Promise<void> {
  await database.db.execute(sql.raw(`TRUNCATE ${RESET_TABLES.join(', ')} RESTART IDENTITY CASCADE`));
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
