/**
 * Migration 0008 (roll chains) on a database whose keys were rolled before it:
 * each successor joins the chain of its first key, so its rate-limit count is
 * the chain's from the first start after the upgrade.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asc, sql } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema.js';
import { appliedMigrations, oldKeysOfOneUser, useDatabaseBefore } from '../helpers/migrations.js';

const old = useDatabaseBefore('0008_roll_chains');

describe('migration 0008: roll chains', () => {
  it('puts every successor of a roll made before it into the chain of its first key', async () => {
    const { database } = old;
    await old.migrateBefore();
    // Two chains, a -> b -> c and d -> e, and a key f never rolled; ids in that order.
    const { ids } = await oldKeysOfOneUser(database, 6, { permissions: false });
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
