/**
 * The reset between tests (test/helpers/database.ts) empties every table, so no
 * test sees another's rows: the tables it truncates are every table the
 * migrations create, the mail outbox among them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/database-core.js';
import { mailOutbox } from '../../src/db/schema.js';
import { RESET_TABLES, resetDatabase, useTestDatabase } from '../helpers/database.js';

describe('the test database reset', () => {
  const test = useTestDatabase();

  it('truncates every table of the migrated database', async () => {
    const rows = await queryRows<{ name: string }>(
      test.current.database.db,
      sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
    );
    assert.deepEqual(
      [...RESET_TABLES].sort(),
      rows.map((r) => r.name),
    );
  });

  it('empties the mail outbox', async () => {
    const { db } = test.current.database;
    await db.insert(mailOutbox).values({ recipient: 'a@example.test', subject: 's', body: 'b' });
    await resetDatabase(test.current.database);
    assert.deepEqual(await db.select().from(mailOutbox), []);
  });
});
