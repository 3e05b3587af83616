/**
 * A key never grants more than it has (docs/key-lifecycle.md): what a key
 * creates, rolls or changes stays within its own expiry, rate limit and access;
 * a rolled key in its grace period can be neither changed nor rolled again, and
 * its successor continues its rate-limit count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, users } from '../../src/db/schema.js';
import { json, useTestApp, type Injected } from '../helpers/app.js';
import { createKey, keysSnapshot, rollKey, updateKey, whoAmI } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { NEEDS_REDIS, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const h = useTestApp();
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const LIMIT = { limit: 100, window_seconds: 60 };

/** A customer key made with a token: it expires in 30 days and may make 100 requests a minute. */
async function limitedSetup(overrides = {}) {
  const { app, world, token } = await customerSession(h, overrides);
  const expiresAt = inDays(30);
  const res = await createKey(
    app,
    { token },
    { user: 'ci@alpha.test', customer_id: world.customerId, expires_at: expiresAt, rate_limit: LIMIT },
  );
  assert.equal(res.statusCode, 201, res.body);
  const key = json(res) as { id: string; api_key: string };
  return { app, world, token, key, creds: { key: key.api_key }, expiresAt };
}

function assertEscalation(res: Injected, what: string): void {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
  assert.equal(json(res).code, 'key_escalation', what);
  assert.match(String(res.headers['content-type']), /application\/problem\+json/);
}

describe('keys created with a key: inherit at most what the creator has', () => {
  it('take the creating key’s expiry, rate limit and access when none are sent', async () => {
    const { app, world, creds, expiresAt } = await limitedSetup();
    const res = await createKey(app, creds, { user: 'child@alpha.test', customer_id: world.customerId });
    assert.equal(res.statusCode, 201, res.body);
    const child = json(res);
    assert.equal(child.expires_at, expiresAt);
    assert.deepEqual(child.rate_limit, LIMIT);
    assert.equal(child.access, 'full');
    // A merchant key made by the customer key inherits the same.
    const pos = json(
      await createKey(app, creds, {
        user: 'pos@alpha.test',
        customer_id: world.customerId,
        merchant_id: world.merchantIds[0],
      }),
    );
    assert.deepEqual([pos.expires_at, pos.rate_limit], [expiresAt, LIMIT]);
  });

  it('may ask for less: an earlier expiry, a tighter rate limit, read_only access', async () => {
    const { app, world, creds } = await limitedSetup();
    const expiresAt = inDays(10);
    const res = await createKey(app, creds, {
      user: 'child@alpha.test',
      customer_id: world.customerId,
      expires_at: expiresAt,
      access: 'read_only',
      rate_limit: { limit: 50, window_seconds: 120 },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      [json(res).expires_at, json(res).rate_limit, json(res).access],
      [expiresAt, { limit: 50, window_seconds: 120 }, 'read_only'],
    );
    const same = await createKey(app, creds, {
      user: 'child@alpha.test',
      customer_id: world.customerId,
      rate_limit: LIMIT,
    });
    assert.equal(same.statusCode, 201, 'its own limit is no looser than itself');
  });

  it('asking for more is a 403 key_escalation and writes nothing', async () => {
    const { app, world, creds } = await limitedSetup();
    const before = await keysSnapshot(h.db.current.database);
    const base = { user: 'child@alpha.test', customer_id: world.customerId };
    for (const [what, extra] of [
      ['a later expiry', { expires_at: inDays(31) }],
      ['a higher limit', { rate_limit: { limit: 101, window_seconds: 60 } }],
      ['a shorter window', { rate_limit: { limit: 100, window_seconds: 59 } }],
      ['a lower limit over a much shorter window (a higher rate)', { rate_limit: { limit: 10, window_seconds: 1 } }],
      ['a lower rate with a larger burst', { rate_limit: { limit: 1000, window_seconds: 3600 } }],
    ] as const) {
      const res = await createKey(app, creds, { ...base, ...extra });
      assertEscalation(res, what);
      assert.ok(!res.body.includes('fgk_'), 'no key in the answer');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it('a token (a person) is not bound by any key: it may create keys without expiry or limit', async () => {
    const { app, world, token } = await limitedSetup();
    const res = await createKey(app, { token }, { user: 'free@alpha.test', customer_id: world.customerId });
    assert.equal(res.statusCode, 201);
    assert.deepEqual([json(res).expires_at, json(res).rate_limit], [null, null]);
  });
});

describe('PATCH with a key: it may shorten, never lengthen', () => {
  it('refuses a key removing or lengthening its own expiry, or removing or loosening its own rate limit; nothing changes', async () => {
    const { app, key, creds } = await limitedSetup();
    const before = await keysSnapshot(h.db.current.database);
    for (const [what, payload] of [
      ['removing its expiry', { expires_at: null }],
      ['lengthening its expiry', { expires_at: inDays(60) }],
      ['removing its rate limit', { rate_limit: null }],
      ['raising its limit', { rate_limit: { limit: 1000, window_seconds: 60 } }],
      ['shortening its window', { rate_limit: { limit: 100, window_seconds: 1 } }],
      ['a name with a longer expiry', { name: 'sneaky', expires_at: inDays(60) }],
    ] as const) {
      assertEscalation(await updateKey(app, creds, key.id, payload), what);
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it('lets a key shorten its own expiry and tighten its own rate limit', async () => {
    const { app, key, creds } = await limitedSetup();
    const expiresAt = inDays(7);
    const res = await updateKey(app, creds, key.id, {
      expires_at: expiresAt,
      rate_limit: { limit: 10, window_seconds: 60 },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([json(res).expires_at, json(res).rate_limit], [expiresAt, { limit: 10, window_seconds: 60 }]);
    // Now bound by what it became: back to 30 days is a lengthening.
    assertEscalation(
      await updateKey(app, { key: key.api_key }, key.id, { expires_at: inDays(30) }),
      'back to its old expiry',
    );
    assert.equal(
      (await updateKey(app, { key: key.api_key }, key.id, { name: 'renamed' })).statusCode,
      200,
      'a name is not a privilege',
    );
  });

  it('cannot give another key more than itself, but may tighten any key it can see', async () => {
    const { app, world, token, creds } = await limitedSetup();
    const child = json(await createKey(app, creds, { user: 'child@alpha.test', customer_id: world.customerId }));
    const free = json(
      await createKey(
        app,
        { token },
        { user: 'free@alpha.test', customer_id: world.customerId, rate_limit: { limit: 200, window_seconds: 60 } },
      ),
    );
    const before = await keysSnapshot(h.db.current.database);
    assertEscalation(
      await updateKey(app, creds, child.id, { expires_at: null }),
      'removing the expiry of a key it made',
    );
    assertEscalation(
      await updateKey(app, creds, child.id, { rate_limit: null }),
      'removing the rate limit of a key it made',
    );
    assertEscalation(
      await updateKey(app, creds, free.id, { rate_limit: { limit: 150, window_seconds: 30 } }),
      "a limit looser than its own and than the key's",
    );
    assert.equal(await keysSnapshot(h.db.current.database), before);
    // Tightening a key that has more than the caller is no grant: the caller could delete it anyway.
    const tightened = await updateKey(app, creds, free.id, {
      expires_at: inDays(90),
      rate_limit: { limit: 150, window_seconds: 60 },
    });
    assert.equal(tightened.statusCode, 200, tightened.body);
    const earlier = await updateKey(app, creds, child.id, { expires_at: inDays(3) });
    assert.equal(earlier.statusCode, 200, earlier.body);
  });

  it('a token may lengthen and remove expiry and rate limit of any key it can see', async () => {
    const { app, token, key } = await limitedSetup();
    const res = await updateKey(app, { token }, key.id, { expires_at: null, rate_limit: null });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([json(res).expires_at, json(res).rate_limit], [null, null]);
  });
});

describe('roll with a key', () => {
  it('rolls itself into a successor with its own settings', async () => {
    const { app, key, creds, expiresAt } = await limitedSetup();
    const res = await rollKey(app, creds, key.id, { grace_period_seconds: 60 });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([json(res).expires_at, json(res).rate_limit], [expiresAt, LIMIT]);
  });

  it('refuses to roll a key that has more than the caller (403 key_escalation), and rolls one that has less', async () => {
    const { app, world, token, creds } = await limitedSetup();
    const free = json(await createKey(app, { token }, { user: 'free@alpha.test', customer_id: world.customerId }));
    const later = json(
      await createKey(
        app,
        { token },
        { user: 'later@alpha.test', customer_id: world.customerId, expires_at: inDays(40), rate_limit: LIMIT },
      ),
    );
    const before = await keysSnapshot(h.db.current.database);
    assertEscalation(await rollKey(app, creds, free.id), 'rolling a key without expiry or limit');
    assertEscalation(await rollKey(app, creds, later.id), 'rolling a key that expires later');
    assert.equal(await keysSnapshot(h.db.current.database), before);
    const child = json(
      await createKey(app, creds, {
        user: 'child@alpha.test',
        customer_id: world.customerId,
        rate_limit: { limit: 5, window_seconds: 60 },
      }),
    );
    assert.equal((await rollKey(app, creds, child.id)).statusCode, 201);
  });
});

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
