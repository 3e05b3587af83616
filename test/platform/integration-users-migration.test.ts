/**
 * Migration 0007 (integration users per customer) on a database that already
 * ran every earlier migration and holds data of the old shape: the migrator
 * applies it on the next start, and existing keys and logins keep working.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash } from '@node-rs/argon2';
import { eq, sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { queryRows } from '../../src/db/database.js';
import { apiKeys, users } from '../../src/db/schema.js';
import { API_KEY_PREFIX, generateApiKey, lastFour } from '../../src/features/api-keys/api-key-format.js';
import { ARGON2_OPTIONS } from '../../src/features/credentials/password-hasher.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import { json } from '../helpers/app.js';
import { createKey, whoAmI } from '../helpers/api-keys.js';
import { loginAs, uuid } from '../helpers/fixtures.js';
import { appliedMigrations, useDatabaseBefore } from '../helpers/migrations.js';

const NEW_MIGRATION = '0007_integration_users_per_customer';

const old = useDatabaseBefore(NEW_MIGRATION);

describe('migration 0007: integration users per customer', () => {
  it('applies on a database holding the old shape, keeping its keys and logins working', async () => {
    const { database } = old;
    await old.migrateBefore();

    const alpha = uuid('c');
    const beta = uuid('c');
    const store = uuid('d');
    const password = 'alpha-password-1';
    const key = (userId: string, customerId: string, merchantId: string | null) => {
      const value = generateApiKey();
      return {
        value,
        row: sql`(${userId}, ${customerId}, ${merchantId}, ${sha256Hex(value)}, ${API_KEY_PREFIX}, ${lastFour(value)})`,
      };
    };
    // The old shape: one user per e-mail, and a key issued to the login user's e-mail held by the login user itself.
    await database.db.execute(sql`INSERT INTO customers (id, name) VALUES (${alpha}, 'Alpha'), (${beta}, 'Beta')`);
    await database.db.execute(
      sql`INSERT INTO merchants (id, customer_id, name) VALUES (${store}, ${alpha}, 'Alpha Store')`,
    );
    const [owner] = await queryRows<{ id: string }>(
      database.db,
      sql`
      INSERT INTO users (email, type, customer_id, password_hash) VALUES ('owner@alpha.test', 'CUSTOMER', ${alpha}, ${await hash(password, ARGON2_OPTIONS)})
      RETURNING id`,
    );
    const [pos] = await queryRows<{ id: string }>(
      database.db,
      sql`
      INSERT INTO users (email, type, customer_id, merchant_id) VALUES ('pos@alpha.test', 'MERCHANT', ${alpha}, ${store}) RETURNING id`,
    );
    const ownerKey = key(owner!.id, alpha, null);
    const posKey = key(pos!.id, alpha, store);
    await database.db.execute(sql`
      INSERT INTO api_keys (user_id, customer_id, merchant_id, key_hash, display_prefix, last4) VALUES ${ownerKey.row}, ${posKey.row}`);

    // The next start: the migrator applies 0007 although 0004-0006 ran before it.
    await database.migrate();
    const { applied, total } = await appliedMigrations(database);
    assert.equal(applied, total, 'every migration ran, 0007 included');

    const app = await buildApp({ config: testConfig(), database });
    try {
      await app.ready();
      const ownerMe = await whoAmI(app, ownerKey.value);
      assert.equal(ownerMe.statusCode, 200, ownerMe.body);
      assert.equal(json(ownerMe).user, 'owner@alpha.test');
      assert.equal(json(ownerMe).customer_id, alpha);
      assert.notEqual(json(ownerMe).id, owner!.id, "the key moved to the customer's integration user of that e-mail");
      const posMe = await whoAmI(app, posKey.value);
      assert.equal(posMe.statusCode, 200, posMe.body);
      assert.equal(json(posMe).id, pos!.id, 'an integration user keeps its id');
      assert.equal(json(posMe).merchant_id, store);

      const token = (await loginAs(app, { user: 'owner@alpha.test', password })).access_token;
      const [moved] = await database.db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.keyHash, sha256Hex(ownerKey.value)));
      const [holder] = await database.db.select().from(users).where(eq(users.id, moved!.userId));
      assert.equal(holder!.passwordHash, null);
      // More keys for the login user's e-mail join the same integration user; the new rule holds.
      assert.equal((await createKey(app, { token }, { user: 'owner@alpha.test', customer_id: alpha })).statusCode, 201);
      assert.equal((await database.db.select().from(users).where(eq(users.email, 'owner@alpha.test'))).length, 2);
      await database.db.execute(
        sql`INSERT INTO users (email, type, customer_id) VALUES ('pos@alpha.test', 'CUSTOMER', ${beta})`,
      );
    } finally {
      await app.close();
    }
  });
});
