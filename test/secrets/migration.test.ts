/**
 * Migration 0015 (secrets at rest) on a database written before it: the private
 * signing key, stored as plain JSON (jsonb), becomes text and is encrypted at the
 * first start with a ring; the same key keeps signing.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { decodeProtectedHeader } from 'jose';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { queryRows } from '../../src/db/database.js';
import { newSigningKey } from '../../src/features/auth/access-tokens.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { useDatabaseBefore } from '../helpers/migrations.js';

const old = useDatabaseBefore('0015_secrets_at_rest');
let app: FastifyInstance | undefined;
after(() => app?.close());

describe('migration 0015: secrets at rest', () => {
  it('encrypts the signing key stored as plain JSON, which keeps signing under its kid', async () => {
    const { database } = old;
    await old.migrateBefore();
    const key = await newSigningKey();
    await database.db.execute(sql`INSERT INTO signing_keys (kid, algorithm, public_jwk, private_jwk)
      VALUES (${key.kid}, 'EdDSA', ${JSON.stringify(key.publicJwk)}::jsonb, ${JSON.stringify(key.privateJwk)}::jsonb)`);

    await database.migrate();
    app = await buildApp({ config: testConfig(), database });
    const [stored] = await queryRows<{ private_jwk: string }>(database.db, sql`SELECT private_jwk FROM signing_keys`);
    assert.match(stored!.private_jwk, /^enc:v1:test:/);
    assert.ok(!stored!.private_jwk.includes(String(key.privateJwk.d)));
    const world = await seedWorld(app);
    assert.equal(decodeProtectedHeader((await loginAs(app, world.login)).access_token).kid, key.kid);
  });
});
