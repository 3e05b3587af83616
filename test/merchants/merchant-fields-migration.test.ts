/**
 * Migration 0011 (merchant fields) on a database with merchants made before it:
 * each keeps its name, is ACTIVE, answers null for every new field, was last
 * changed when it was made, and keeps working (its keys, its plans).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { merchants } from '../../src/db/schema.js';
import { merchantResource } from '../../src/features/merchants/merchants-service.js';
import { uuid } from '../helpers/fixtures.js';
import { merchantWithNameOnly } from '../helpers/merchants.js';
import { appliedMigrations, useDatabaseBefore } from '../helpers/migrations.js';

const old = useDatabaseBefore('0011_merchant_fields');

describe('migration 0011: merchant fields', () => {
  it('gives merchants made before it their name, ACTIVE, nulls, and their create date as update date', async () => {
    const { database } = old;
    await old.migrateBefore();
    const customer = uuid('c');
    const merchant = uuid('d');
    await database.db.execute(sql`INSERT INTO customers (id, name) VALUES (${customer}, 'Alpha')`);
    await database.db.execute(sql`
      INSERT INTO merchants (id, customer_id, name, created_at) VALUES (${merchant}, ${customer}, 'Old shop', '2026-01-02T03:04:05.678Z')`);

    await database.migrate();
    const { applied, total } = await appliedMigrations(database);
    assert.equal(applied, total, 'every migration ran, 0011 included');
    const [row] = await database.db.select().from(merchants);
    assert.deepEqual(
      merchantResource(row!),
      merchantWithNameOnly({
        id: merchant,
        customer_id: customer,
        name: 'Old shop',
        create_date: '2026-01-02T03:04:05.678Z',
      }),
    );
    // The database keeps the identifier fitting the country, whatever writes it.
    await assert.rejects(
      database.db.execute(
        sql`UPDATE merchants SET country = 'ARG', tax_identification_type = 'RFC', tax_identification_number = 'GODE561231GR8'`,
      ),
    );
  });
});
