/**
 * A real database per test file: a fresh PostgreSQL database on the server of
 * TEST_DATABASE_URL when it is set, otherwise an in-memory PGlite. Both migrated
 * with the same migrations the service runs, once per migrations: each file's
 * database starts as a copy of a migrated one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { after, before, beforeEach } from 'node:test';
import pg from 'pg';
import { findInPackage, MIGRATIONS_FOLDER, openDatabase, sqlState, type Database } from '../../src/db/database.js';
import { PGLITE_TEMPLATE, PGLITE_VERSION, pgliteDatabase, startPgliteWorker } from '../../src/db/pglite.js';

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

/** Names a migrated copy after the migrations (and `salt`), so that a changed migration never reuses an older copy. */
function migrationsKey(salt: string): string {
  const hash = createHash('sha256').update(salt);
  for (const file of readdirSync(MIGRATIONS_FOLDER, { recursive: true }).map(String).sort()) {
    const full = path.join(MIGRATIONS_FOLDER, file);
    if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
  }
  return hash.digest('hex').slice(0, 16);
}

/** From the shipped initdb template when there is one: seconds faster, and no second PostgreSQL in memory. */
async function emptyPglite(): Promise<PGlite> {
  const template = findInPackage(PGLITE_TEMPLATE);
  return PGlite.create(template ? { loadDataDir: new Blob([brotliDecompressSync(readFileSync(template))]) } : {});
}

/**
 * Booting PGlite (its initdb) takes seconds; loading a snapshot of a migrated
 * database takes a fraction. The snapshot is kept in the temp directory, keyed by
 * the migrations and the PGlite version (a new build must not load an older
 * one's snapshot), and shared by every test process. It is an uncompressed tar:
 * 40 MB of disk, and a quarter second less CPU for every file that loads it.
 */
async function migratedPgliteSnapshot(): Promise<Blob> {
  const snapshot = path.join(os.tmpdir(), `feegate-test-pglite-${migrationsKey(PGLITE_VERSION)}.tar`);
  if (!existsSync(snapshot)) {
    const client = await emptyPglite();
    await pgliteDatabase(client).migrate();
    const blob = await client.dumpDataDir('none');
    await client.close();
    // Write then rename: concurrent test processes never read half a file.
    const partial = `${snapshot}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await blob.arrayBuffer()));
    renameSync(partial, snapshot);
  }
  return new Blob([readFileSync(snapshot)]);
}

function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Any number; test processes on one server serialise making the template on it. */
const TEMPLATE_LOCK_ID = 7_331_101;

/**
 * Migrating a fresh PostgreSQL database takes about a second of every test file;
 * copying a migrated template (CREATE DATABASE … TEMPLATE) a fraction. The
 * template is made once per server and migrations (its name holds their hash),
 * by whichever test process gets the advisory lock first; it is marked a
 * template only once fully migrated, so one left half-made by a killed run is
 * made again. Other worktrees' migrations get templates of their own.
 */
async function migratedPostgresTemplate(admin: pg.Client): Promise<string> {
  const name = `feegate_test_template_${migrationsKey('postgres')}`;
  await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_ID]);
  try {
    const found = await admin.query<{ ready: boolean }>(
      'SELECT datistemplate AS ready FROM pg_database WHERE datname = $1',
      [name],
    );
    if (found.rows[0]?.ready) return name;
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    const database = await openDatabase({ databaseUrl: databaseUrl(name), poolSize: 1 });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
    await admin.query(`ALTER DATABASE ${name} IS_TEMPLATE true`);
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_ID]);
  }
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
  try {
    const template = migrated ? ` TEMPLATE ${await migratedPostgresTemplate(admin)}` : '';
    await admin.query(`CREATE DATABASE ${name}${template}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(name);
  const database = await openDatabase({ databaseUrl: url, poolSize: 10 });
  if (migrated) await database.migrate(); // a no-op on the copy; keeps the migrator honest
  return {
    database,
    url,
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

/** PostgreSQL's lock_not_available: TRUNCATE waited longer than the connection's lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Empties every table. The fault tests leave server backends whose client was cut off
 * (database-hangs.test.ts); on a loaded machine one may still hold its locks until its
 * own statement timeout ends it, so a TRUNCATE refused for a lock is tried again.
 */
export async function resetDatabase(database: Database): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await database.db.execute(sql.raw(`TRUNCATE ${RESET_TABLES.join(', ')} RESTART IDENTITY CASCADE`));
      return;
    } catch (err) {
      if (sqlState(err) !== LOCK_NOT_AVAILABLE || attempt >= 20) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
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
