/**
 * The migrations are hand-written SQL (docs/design.md, "Migrations"), so
 * nothing generates them from src/db/schema.ts: this test is what keeps the two
 * one schema. A database migrated from scratch and a database that drizzle-kit
 * built from schema.ts alone must have the same enums, columns (type,
 * nullability, default), constraints (primary, unique, check, foreign keys, by
 * name) and indexes, as PostgreSQL prints them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { pushSchema } from 'drizzle-kit/api';
import type { Db } from '../../src/db/database-core.js';
import * as schema from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { catalogueDrift, schemaCatalogue } from '../helpers/schema-catalogue.js';

/** The catalogue as it is after `change`, which is then rolled back (DDL is transactional in PostgreSQL). */
async function catalogueAfter(db: Db, change: string): Promise<string[]> {
  let lines: string[] = [];
  await db
    .transaction(async (tx) => {
      await tx.execute(sql.raw(change));
      lines = await schemaCatalogue(tx as unknown as Db);
      tx.rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.message === 'Rollback')) throw error;
    });
  return lines;
}

describe('the migrations and src/db/schema.ts', () => {
  let migrated: TestDatabase;
  let declared: TestDatabase;

  before(async () => {
    migrated = await createTestDatabase();
    declared = await createTestDatabase({ migrated: false });
    const push = await pushSchema(schema as Record<string, unknown>, declared.database.db as never);
    await push.apply();
  });
  after(async () => {
    await migrated?.drop();
    await declared?.drop();
  });

  it('a database migrated from scratch has exactly what schema.ts declares', async () => {
    const drift = catalogueDrift(
      await schemaCatalogue(migrated.database.db),
      await schemaCatalogue(declared.database.db),
    );
    assert.deepEqual(drift, [], `migrations/ and src/db/schema.ts differ:\n${drift.join('\n')}`);
  });

  it('tells a column declared without a migration, and an index migrated without a declaration, as lines', async () => {
    const db = migrated.database.db;
    const base = await schemaCatalogue(db);
    const withColumn = await catalogueAfter(
      db,
      `ALTER TABLE merchants ADD COLUMN nickname varchar(40) NOT NULL DEFAULT ''`,
    );
    const withIndex = await catalogueAfter(db, 'CREATE INDEX merchants_name_idx ON merchants (name)');
    assert.deepEqual(catalogueDrift(base, withColumn), [
      "only in src/db/schema.ts: column merchants.nickname character varying(40) NOT NULL DEFAULT ''::character varying",
    ]);
    assert.deepEqual(catalogueDrift(withIndex, base), [
      'only in migrations/: index merchants merchants_name_idx: CREATE INDEX merchants_name_idx ON public.merchants USING btree (name)',
    ]);
  });

  it('tells a changed nullability, default or foreign key of the same column', async () => {
    const db = migrated.database.db;
    const changed = await catalogueAfter(
      db,
      `ALTER TABLE webhook_deliveries ALTER COLUMN last_error SET NOT NULL, ALTER COLUMN attempts SET DEFAULT 1,
         DROP CONSTRAINT webhook_deliveries_event_id_fkey,
         ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES domain_events(id) ON DELETE CASCADE`,
    );
    assert.deepEqual(catalogueDrift(changed, await schemaCatalogue(db)), [
      'only in migrations/: column webhook_deliveries.attempts integer NOT NULL DEFAULT 1',
      'only in migrations/: column webhook_deliveries.last_error text NOT NULL',
      'only in migrations/: constraint webhook_deliveries webhook_deliveries_event_id_fkey: FOREIGN KEY (event_id) REFERENCES domain_events(id) ON DELETE CASCADE',
      'only in src/db/schema.ts: column webhook_deliveries.attempts integer NOT NULL DEFAULT 0',
      'only in src/db/schema.ts: column webhook_deliveries.last_error text',
      'only in src/db/schema.ts: constraint webhook_deliveries webhook_deliveries_event_id_fkey: FOREIGN KEY (event_id) REFERENCES domain_events(id)',
    ]);
  });
});
