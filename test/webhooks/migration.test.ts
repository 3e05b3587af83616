/**
 * Migration 0013 (webhooks) on a database with events written before it: they
 * count as fanned out (no subscription existed to want them), so the first
 * start after the upgrade delivers only what happens from then on; events
 * written afterwards wait for fan-out.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/database.js';
import { uuid } from '../helpers/fixtures.js';
import { appliedMigrations, useDatabaseBefore } from '../helpers/migrations.js';

const old = useDatabaseBefore('0013_webhooks');

describe('migration 0013: webhooks', () => {
  it('marks the events already written as fanned out, and leaves new ones to the worker', async () => {
    const { database } = old;
    await old.migrateBefore();
    const customer = uuid('c');
    await database.db.execute(sql`INSERT INTO customers (id, name) VALUES (${customer}, 'Alpha')`);
    await database.db.execute(
      sql`INSERT INTO domain_events (type, customer_id, data) VALUES ('API_KEY_CREATED', ${customer}, '{}')`,
    );

    await database.migrate();
    const { applied, total } = await appliedMigrations(database);
    assert.equal(applied, total, 'every migration ran, 0013 included');
    await database.db.execute(
      sql`INSERT INTO domain_events (type, customer_id, data) VALUES ('API_KEY_REVOKED', ${customer}, '{}')`,
    );
    const rows = await queryRows<{ type: string; pending: boolean }>(
      database.db,
      sql`SELECT type, fanned_out_at IS NULL AS pending FROM domain_events ORDER BY created_at, type`,
    );
    assert.deepEqual(
      rows.map((r) => [r.type, r.pending]),
      [
        ['API_KEY_CREATED', false],
        ['API_KEY_REVOKED', true],
      ],
    );
  });
});
