/**
 * A rolled key (docs/key-lifecycle.md): in its grace period it can be neither
 * changed nor rolled again, and its successor continues its rate-limit count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, users } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import {
  assertEscalation,
  createKey,
  inDays,
  keysSnapshot,
  limitedKeySession,
  rollKey,
  updateKey,
  whoAmI,
} from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { NEEDS_REDIS, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const h = useTestApp();
const limitedSetup = () => limitedKeySession(h);

describe('a rolled key in its grace period', () => {
  it('can be neither changed nor rolled again, by itself or by a token: 409 api_key_not_enabled, nothing changes', async () => {
    const { app, token, key, creds } = await limitedSetup();
    const successor = json(await rollKey(app, creds, key.id, { grace_period_seconds: 3600 }));
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200, 'still works in its grace period');
    const before = await keysSnapshot(h.db.current.database);
    for (const res of [
      await updateKey(app, creds, key.id, { expires_at: null }),
      await updateKey(app, creds, key.id, { name: 'still here' }),
      await updateKey(app, { token }, key.id, { expires_at: inDays(30) }),
      await rollKey(app, creds, key.id),
      await rollKey(app, { token }, key.id),
    ]) {
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(json(res).code, 'api_key_not_enabled');
    }
    // Nor can it lend itself its successor's longer life.
    assertEscalation(
      await updateKey(app, creds, successor.id, { expires_at: null }),
      "removing the successor's expiry",
    );
    assertEscalation(await rollKey(app, creds, successor.id), 'rolling its successor, which outlives it');
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it('rolling ten keys at the limit and trying to keep the old ones never leaves a user more than 10 keys beyond their grace period', async () => {
    const { app, world, creds } = await limitedSetup();
    const keys: Array<{ id: string; api_key: string }> = [];
    for (let i = 0; i < 10; i++) {
      const res = await createKey(app, creds, { user: 'farm@alpha.test', customer_id: world.customerId });
      assert.equal(res.statusCode, 201, res.body);
      keys.push(json(res));
    }
    const grace = 600;
    for (const key of keys) {
      const successor = json(await rollKey(app, { key: key.api_key }, key.id, { grace_period_seconds: grace }));
      assert.equal(
        (await updateKey(app, { key: key.api_key }, key.id, { expires_at: null })).statusCode,
        409,
        'the old key keeps its end',
      );
      assert.equal(
        (await updateKey(app, { key: successor.api_key }, successor.id, { expires_at: null })).statusCode,
        403,
        'the new key keeps its expiry',
      );
      assert.equal(
        (await updateKey(app, { key: key.api_key }, successor.id, { expires_at: null })).statusCode,
        403,
        'the old key cannot free the new',
      );
    }
    assert.equal(
      (await createKey(app, creds, { user: 'farm@alpha.test', customer_id: world.customerId })).statusCode,
      409,
      'no 11th while the old ones live',
    );
    // Once the grace periods are over, at most 10 keys of the user still work.
    const { db } = h.db.current.database;
    const alive = await db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(
        and(
          eq(users.email, 'farm@alpha.test'),
          eq(apiKeys.status, 'ENABLED'),
          or(isNull(apiKeys.expiresAt), sql`${apiKeys.expiresAt} > now() + make_interval(secs => ${grace + 5})`),
        ),
      );
    assert.equal(alive.length, 10);
    assert.ok(
      (await db.select({ id: apiKeys.id }).from(apiKeys).where(isNull(apiKeys.expiresAt))).every(
        ({ id }) => !keys.some((k) => k.id === id),
      ),
      'no key of the farm is permanent',
    );
  });
});

describe("a successor continues its predecessor's rate-limit count", () => {
  async function rollAfterUse(
    app: FastifyInstance,
    roller: FastifyInstance,
    other: FastifyInstance,
    token: string,
    customerId: string,
  ) {
    const key = json(
      await createKey(
        app,
        { token },
        { user: 'limited@alpha.test', customer_id: customerId, rate_limit: { limit: 4, window_seconds: 3600 } },
      ),
    );
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
    const rolled = await rollKey(roller, { key: key.api_key }, key.id, { grace_period_seconds: 600 });
    assert.equal(rolled.statusCode, 201, 'the third request');
    const successor = json(rolled).api_key as string;
    const fourth = await whoAmI(other, successor);
    assert.equal(fourth.statusCode, 200);
    assert.equal(fourth.headers['ratelimit-remaining'], '0', 'the count went on from 3');
    for (const [instance, apiKey] of [
      [other, successor],
      [app, successor],
      [app, key.api_key],
      [other, key.api_key],
    ] as const) {
      const res = await whoAmI(instance, apiKey);
      assert.equal(res.statusCode, 429, 'both keys of the chain share the used-up count');
      assert.equal(json(res).code, 'rate_limited');
    }
    // A PATCH does not restart the count either.
    assert.equal(
      (await updateKey(app, { token }, json(rolled).id, { rate_limit: { limit: 3, window_seconds: 3600 } })).statusCode,
      200,
    );
    assert.equal((await whoAmI(app, successor)).statusCode, 429);
  }

  it('in one instance, in the grace period and after', async () => {
    const { app, world, token } = await customerSession(h);
    await rollAfterUse(app, app, app, token, world.customerId);
  });

  it('across instances sharing Redis', { skip: NEEDS_REDIS }, async () => {
    const config = { redisUrl: TEST_REDIS_URL, redisKeyPrefix: uniquePrefix() };
    const { app, world, token } = await customerSession(h, config);
    const url = h.db.current.url;
    const second = await buildApp({
      config: testConfig(config),
      database: url ? await openDatabase({ databaseUrl: url }) : h.db.current.database,
      ownsDatabase: url !== undefined,
    });
    try {
      await rollAfterUse(app, second, second, token, world.customerId);
    } finally {
      await second.close();
    }
  });
});
