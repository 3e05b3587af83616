/**
 * Migration 0027 (who rolled a key) on a database whose keys were rolled before it:
 * each successor takes its roller from the roll's audit record, so four-eyes
 * approval knows who was handed its secret from the first start after the upgrade.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asc, sql } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema.js';
import { appliedMigrations, oldKeysOfOneUser, useDatabaseBefore } from '../helpers/migrations.js';

const old = useDatabaseBefore('0027_api_key_rolled_by');

describe('migration 0027: who rolled a key', () => {
  it('names the roller of every roll made before it, a user or a key, from its audit record', async () => {
    const { database } = old;
    await old.migrateBefore();
    // a -> b rolled by the user, c -> d rolled by key a, e -> f by the operator; g never rolled. Ids in that order.
    const { customer, userId, ids } = await oldKeysOfOneUser(database, 7, { permissions: true });
    const [a, b, c, d, e, f] = ids;
    for (const [from, to, actorType, actorId] of [
      [a, b, 'user', userId],
      [c, d, 'api_key', a],
      [e, f, 'operator', null],
    ]) {
      await database.db.execute(sql`
        INSERT INTO audit_events (actor_type, actor_id, customer_id, action, target_type, target_id, details)
        VALUES (${actorType}, ${actorId}, ${customer}, 'api_key.rolled', 'api_key', ${from!},
                jsonb_build_object('new_key_id', ${to!}::text))`);
    }

    await database.migrate();
    const { applied, total } = await appliedMigrations(database);
    assert.equal(applied, total, 'every migration ran, 0027 included');
    const rows = await database.db
      .select({ type: apiKeys.rolledByType, id: apiKeys.rolledById })
      .from(apiKeys)
      .orderBy(asc(apiKeys.id));
    assert.deepEqual(rows, [
      { type: null, id: null },
      { type: 'user', id: userId },
      { type: null, id: null },
      { type: 'api_key', id: a },
      { type: null, id: null },
      { type: null, id: null },
      { type: null, id: null },
    ]);
  });
});
