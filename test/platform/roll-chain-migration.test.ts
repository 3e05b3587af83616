/**
 * Migration 0008 (roll chains) on a database whose keys were rolled before it:
 * each successor joins the chain of its first key, so its rate-limit count is
 * the chain's from the first start after the upgrade.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asc, sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/database.js';
import { apiKeys } from '../../src/db/schema.js';
import { API_KEY_PREFIX, generateApiKey, lastFour } from '../../src/features/api-keys/api-key-format.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import { uuid } from '../helpers/fixtures.js';
import { appliedMigrations, useDatabaseBefore } from '../helpers/migrations.js';

const old = useDatabaseBefore('0008_roll_chains');

describe('migration 0008: roll chains', () => {
  it('puts every successor of a roll made before it into the chain of its first key', async () => {
    const { database } = old;
    await old.migrateBefore();
    const customer = uuid('c');
    await database.db.execute(sql`INSERT INTO customers (id, name) VALUES (${customer}, 'Alpha')`);
    const [user] = await queryRows<{ id: string }>(
      database.db,
      sql`
      INSERT INTO users (email, type, customer_id) VALUES ('ci@alpha.test', 'CUSTOMER', ${customer}) RETURNING id`,
    );
    // Two chains, a -> b -> c and d -> e, and a key f never rolled; ids in that order.
    const ids = Array.from({ length: 6 }, () => uuid('f'));
    for (const id of ids) {
      const value = generateApiKey();
      await database.db.execute(sql`
        INSERT INTO api_keys (id, user_id, customer_id, key_hash, display_prefix, last4)
        VALUES (${id}, ${user!.id}, ${customer}, ${sha256Hex(value)}, ${API_KEY_PREFIX}, ${lastFour(value)})`);
    }
    const [a, b, c, d, e] = ids;
    for (const [from, to] of [
      [a, b],
      [b, c],
      [d, e],
    ]) {
      await database.db.execute(sql`UPDATE api_keys SET replaced_by = ${to!} WHERE id = ${from!}`);
    }

    await database.migrate();
    const { applied, total } = await appliedMigrations(database);
    assert.equal(applied, total, 'every migration ran, 0008 included');
    const rows = await database.db
      .select({ id: apiKeys.id, chain: apiKeys.rollChainId })
      .from(apiKeys)
      .orderBy(asc(apiKeys.id));
    assert.deepEqual(
      rows.map((r) => r.chain),
      [null, a, a, null, d, null],
    );
  });
});
