/**
 * A database as an existing installation has it before a migration: every
 * earlier migration applied, none of the later ones, so a test can write data of
 * the old shape and then let the next start migrate it.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { sql } from 'drizzle-orm';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { MIGRATIONS_FOLDER, queryRows, type Database } from '../../src/db/database.js';
import { API_KEY_PREFIX, generateApiKey, lastFour } from '../../src/features/api-keys/api-key-format.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { uuid } from './fixtures.js';

/** A copy of the migrations folder that stops before `tag`. */
async function migrationsBefore(tag: string): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'feegate-migrations-'));
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
  assert.ok(
    journal.entries.some((e) => e.tag === tag),
    `${tag} is a migration`,
  );
  journal.entries = journal.entries.filter((e) => e.tag < tag);
  await writeFile(journalPath, JSON.stringify(journal));
  return folder;
}

/**
 * For the file's tests: an unmigrated database of its own and the migrations
 * before `tag`, both removed after the file. `migrateBefore()` brings the
 * database to where an installation stood before `tag`; `database.migrate()`
 * is then the next start.
 */
export function useDatabaseBefore(tag: string) {
  let test: TestDatabase | undefined;
  let folder: string | undefined;
  before(async () => {
    test = await createTestDatabase({ migrated: false });
    folder = await migrationsBefore(tag);
  });
  after(async () => {
    await test?.drop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });
  return {
    get database(): Database {
      return test!.database;
    },
    async migrateBefore(): Promise<void> {
      const db = test!.database.db as never;
      if (test!.database.driver === 'postgres') await migratePg(db, { migrationsFolder: folder! });
      else await migratePglite(db, { migrationsFolder: folder! });
    },
  };
}

/** How many migrations the database has applied, and how many the repository has. */
export async function appliedMigrations(database: Database): Promise<{ applied: number; total: number }> {
  const [row] = await queryRows<{ n: number }>(
    database.db,
    sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`,
  );
  const journal = JSON.parse(await readFile(path.join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return { applied: row!.n, total: journal.entries.length };
}

/**
 * A customer, one user of it and `count` API keys of that user (ids in ascending
 * order), written as an older schema takes them: `permissions` only once it exists
 * (migration 0022 made it required).
 */
export async function oldKeysOfOneUser(database: Database, count: number, options: { permissions: boolean }) {
  const customer = uuid('c');
  await database.db.execute(sql`INSERT INTO customers (id, name) VALUES (${customer}, 'Alpha')`);
  const [user] = await queryRows<{ id: string }>(
    database.db,
    sql`INSERT INTO users (email, type, customer_id) VALUES ('ci@alpha.test', 'CUSTOMER', ${customer}) RETURNING id`,
  );
  const ids = Array.from({ length: count }, () => uuid('f'));
  for (const id of ids) {
    const value = generateApiKey();
    const columns = sql`id, user_id, customer_id, key_hash, display_prefix, last4`;
    const values = sql`${id}, ${user!.id}, ${customer}, ${sha256Hex(value)}, ${API_KEY_PREFIX}, ${lastFour(value)}`;
    await database.db.execute(
      options.permissions
        ? sql`INSERT INTO api_keys (${columns}, permissions) VALUES (${values}, '{}')`
        : sql`INSERT INTO api_keys (${columns}) VALUES (${values})`,
    );
  }
  return { customer, userId: user!.id, ids };
}
