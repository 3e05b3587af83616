/**
 * Migration 0027 (who rolled a key) on a database whose keys were rolled before it:
 * each successor takes its roller from the roll's audit record, so four-eyes
 * approval knows who was handed its secret from the first start after the upgrade.
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

const old = useDatabaseBefore('0027_api_key_rolled_by');

describe('migration 0027: who rolled a key', () => {
  it('names the roller of every roll made before it, a user or a key, from its audit record', async () => {
    const { database } = old;
    await old.migrateBefore();
    const customer = uuid('c');
    await database.db.execute(sql`INSERT INTO customers (id, name) VALUES (${customer}, 'Alpha')`);
    const [user] = await queryRows<{ id: string }>(
      database.db,
      sql`INSERT INTO users (email, type, customer_id) VALUES ('ci@alpha.test', 'CUSTOMER', ${customer}) RETURNING id`,
    );
    // a -> b rolled by the user, c -> d rolled by key a, e -> f by the operator; g never rolled. Ids in that order.
    const ids = Array.from({ length: 7 }, () => uuid('f'));
    for (const id of ids) {
      const value = generateApiKey();
      await database.db.execute(sql`
        INSERT INTO api_keys (id, user_id, customer_id, key_hash, display_prefix, last4, permissions)
        VALUES (${id}, ${user!.id}, ${customer}, ${sha256Hex(value)}, ${API_KEY_PREFIX}, ${lastFour(value)}, '{}')`);
    }
    const [a, b, c, d, e, f] = ids;
    for (const [from, to, actorType, actorId] of [
      [a, b, 'user', user!.id],
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
      { type: 'user', id: user!.id },
      { type: null, id: null },
      { type: 'api_key', id: a },
      { type: null, id: null },
      { type: null, id: null },
      { type: null, id: null },
    ]);
  });
});
