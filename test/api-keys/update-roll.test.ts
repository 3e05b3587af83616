/** PATCH /v1/api-keys/{id} and POST /v1/api-keys/{id}/roll (docs/key-lifecycle.md). */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, auditEvents } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import {
  createKey,
  deleteKey,
  expireNow,
  keyCount,
  keysSnapshot,
  listKeys,
  rollKey,
  updateKey,
  whoAmI,
} from '../helpers/api-keys.js';
import { customerSession, issueKey, loginAs, uuid } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const setup = () => customerSession(h);
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const audits = async (action: string) =>
  h.db.current.database.db.select().from(auditEvents).where(eq(auditEvents.action, action));
/** One DELETED and one EXPIRED key of the caller's customer. */
async function deletedAndExpiredKeys() {
  const { app, world, token } = await setup();
  const deleted = await issueKey(app, { user: 'a@alpha.test', customerId: world.customerId });
  const expired = await issueKey(app, { user: 'b@alpha.test', customerId: world.customerId });
  await deleteKey(app, { token }, deleted.id);
  await expireNow(h.db.current.database, expired.id);
  return { app, token, ids: [deleted.id, expired.id] };
}
const row = async (id: string) => (await h.db.current.database.db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0]!;

describe('PATCH /v1/api-keys/{id}: happy', () => {
  it('renames and sets an expiry: 200 with the masked record, audited', async () => {
    const { app, world, token } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const expiresAt = inDays(10);
    const res = await updateKey(app, { token }, key.id, { name: 'renamed', expires_at: expiresAt });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal(body.id, key.id);
    assert.equal(body.name, 'renamed');
    assert.equal(body.expires_at, expiresAt);
    assert.equal(body.api_key, `fgk_****${key.api_key.slice(-4)}`);
    assert.ok(!res.body.includes(key.api_key.slice(4, 36)));
    assert.deepEqual(body.customer_id, [world.customerId]);
    assert.equal((await audits('api_key.updated')).length, 1);
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
  });

  it('removes the expiry and the name with null, and changes only what is sent', async () => {
    const { app, world, token } = await setup();
    const created = json(
      await createKey(
        app,
        { token },
        { user: 'ci@alpha.test', customer_id: world.customerId, name: 'keep', expires_at: inDays(3) },
      ),
    );
    const cleared = json(await updateKey(app, { token }, created.id, { expires_at: null }));
    assert.equal(cleared.expires_at, null);
    assert.equal(cleared.name, 'keep');
    assert.equal(json(await updateKey(app, { token }, created.id, { name: null })).name, null);
  });

  it('sets, changes and removes a rate limit, held at once even where the key was cached', async () => {
    const { app, world, token } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200, 'cached without a limit');
    const limited = await updateKey(app, { token }, key.id, { rate_limit: { limit: 2, window_seconds: 3600 } });
    assert.equal(limited.statusCode, 200, limited.body);
    assert.deepEqual(json(limited).rate_limit, { limit: 2, window_seconds: 3600 });
    assert.equal((await whoAmI(app, key.api_key)).headers['ratelimit-remaining'], '1');
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 429);
    const freed = await updateKey(app, { token }, key.id, { rate_limit: null });
    assert.equal(json(freed).rate_limit, null);
    assert.equal((await whoAmI(app, key.api_key)).statusCode, 200);
    const updated = await audits('api_key.updated');
    const audited = updated.map((a) => JSON.stringify((a.details as { rate_limit: unknown }).rate_limit)).sort();
    assert.deepEqual(audited, [JSON.stringify({ limit: 2, window_seconds: 3600 }), 'null'].sort());
  });

  it('a shortened expiry and a roll reach another instance at once', async () => {
    const { app, world, token } = await setup();
    const url = h.db.current.url;
    const secondDb = url ? await openDatabase({ databaseUrl: url }) : h.db.current.database;
    const second = await buildApp({ config: testConfig(), database: secondDb, ownsDatabase: url !== undefined });
    try {
      const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
      assert.equal((await whoAmI(second, key.api_key)).statusCode, 200, 'cached by the second instance');
      assert.equal(
        (await updateKey(app, { token }, key.id, { expires_at: new Date(Date.now() + 1500).toISOString() })).statusCode,
        200,
      );
      await sleep(1600);
      await waitFor(
        async () => (await whoAmI(second, key.api_key)).statusCode === 401,
        'the second instance refuses the key',
        { timeoutMs: 1000 },
      );
      assert.equal(json(await whoAmI(second, key.api_key)).code, 'api_key_expired');
      // A roll without grace too: the old key, cached there, is refused there at once.
      const rolled = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
      assert.equal((await whoAmI(second, rolled.api_key)).statusCode, 200);
      const fresh = json(await rollKey(app, { token }, rolled.id));
      await waitFor(
        async () => (await whoAmI(second, rolled.api_key)).statusCode === 401,
        'the second instance refuses the rolled key',
        { timeoutMs: 1000 },
      );
      assert.equal((await whoAmI(second, fresh.api_key)).statusCode, 200);
    } finally {
      await second.close();
    }
  });
});

describe('PATCH /v1/api-keys/{id}: errors and security (nothing changes)', () => {
  it('refuses bad input with 400', async () => {
    const { app, world, token } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(h.db.current.database);
    for (const payload of [
      {},
      { expires_at: new Date(Date.now() - 1000).toISOString() },
      { expires_at: inDays(5 * 366 + 2) },
      { name: '' },
      { name: 'x'.repeat(65) },
      { access: 'read_only' },
      { rate_limit: { limit: 0, window_seconds: 1 } },
      { rate_limit: { limit: 1, window_seconds: 86_401 } },
      { rate_limit: { limit: 1 } },
      { rate_limit: 10 },
    ]) {
      const res = await updateKey(app, { token }, key.id, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(json(res).code, 'validation_failed');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it('answers 409 api_key_not_enabled for a DELETED or EXPIRED key', async () => {
    const { app, token, ids } = await deletedAndExpiredKeys();
    const before = await keysSnapshot(h.db.current.database);
    for (const id of ids) {
      const res = await updateKey(app, { token }, id, { expires_at: null });
      assert.equal(res.statusCode, 409);
      assert.equal(json(res).code, 'api_key_not_enabled');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it("answers 404 to a merchant changing another merchant's key, and to anyone for another customer's or an unknown key", async () => {
    const { app, world, token } = await setup();
    const mine = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const sibling = await issueKey(app, {
      user: 'pos2@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[1]!,
    });
    const customerKey = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const foreign = await issueKey(app, { user: 'x@beta.test', customerId: world.otherCustomerId });
    const before = await keysSnapshot(h.db.current.database);
    const answers = [
      await updateKey(app, { key: mine.api_key }, sibling.id, { name: 'hijacked' }),
      await updateKey(app, { key: mine.api_key }, customerKey.id, { name: 'hijacked' }),
      await updateKey(app, { token }, foreign.id, { name: 'hijacked' }),
      await updateKey(app, { token }, uuid('f'), { name: 'hijacked' }),
    ];
    for (const res of answers) {
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'api_key_not_found');
      assert.equal(json(res).detail, json(answers[3]!).detail);
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
    // Its own key, a merchant may change.
    assert.equal((await updateKey(app, { key: mine.api_key }, mine.id, { name: 'till 1' })).statusCode, 200);
  });
});

describe('POST /v1/api-keys/{id}/roll: happy', () => {
  it('answers 201 with a new full key carrying the same settings; the old one is refused at once (grace 0), audited', async () => {
    const { app, world, token } = await setup();
    const expiresAt = inDays(90);
    const old = json(
      await createKey(
        app,
        { token },
        {
          user: 'pos@alpha.test',
          customer_id: world.customerId,
          merchant_id: world.merchantIds[0],
          name: 'till',
          expires_at: expiresAt,
          access: 'read_only',
          rate_limit: { limit: 50, window_seconds: 10 },
        },
      ),
    );
    const res = await rollKey(app, { token }, old.id);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const fresh = json(res);
    assert.notEqual(fresh.id, old.id);
    assert.match(fresh.api_key, /^fgk_[0-9A-Za-z]{38}$/);
    assert.notEqual(fresh.api_key, old.api_key);
    for (const field of [
      'user',
      'user_type',
      'customer_id',
      'merchant_id',
      'name',
      'expires_at',
      'access',
      'rate_limit',
      'permissions',
      'allowed_ips',
      'status',
    ]) {
      assert.deepEqual(fresh[field], old[field], field);
    }
    const refused = await whoAmI(app, old.api_key);
    assert.equal(refused.statusCode, 401);
    assert.equal(json(refused).code, 'api_key_expired');
    assert.equal((await whoAmI(app, fresh.api_key)).statusCode, 200);
    const rolled = await audits('api_key.rolled');
    assert.equal(rolled.length, 1);
    assert.equal(rolled[0]!.targetId, old.id);
    assert.equal((rolled[0]!.details as { new_key_id: string }).new_key_id, fresh.id);
    const listed = json(await listKeys(app, { token }, `?merchant_id=${world.merchantIds[0]}&status=EXPIRED`)).data;
    assert.deepEqual(
      listed.map((k: { id: string }) => k.id),
      [old.id],
    );
  });

  it('with a grace period keeps both keys working until the old one expires', async () => {
    const { app, world, token } = await setup();
    const old = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    assert.equal((await whoAmI(app, old.api_key)).statusCode, 200, 'cached before the roll');
    const started = Date.now();
    const fresh = json(await rollKey(app, { token }, old.id, { grace_period_seconds: 2 }));
    const oldExpiry = Date.parse(
      json(await listKeys(app, { token })).data.find((k: { id: string }) => k.id === old.id).expires_at,
    );
    assert.ok(Math.abs(oldExpiry - (started + 2000)) < 1500, 'the old key expires after the grace period');
    assert.equal((await whoAmI(app, old.api_key)).statusCode, 200, 'the old key works during the grace period');
    assert.equal((await whoAmI(app, fresh.api_key)).statusCode, 200, 'the new key works');
    await sleep(Math.max(0, oldExpiry - Date.now()) + 100);
    assert.equal(json(await whoAmI(app, old.api_key)).code, 'api_key_expired');
    assert.equal((await whoAmI(app, fresh.api_key)).statusCode, 200);
  });

  it('is allowed at the 10-key limit, and by a merchant for its own key', async () => {
    const { app, world, token } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push((await issueKey(app, { user: 'full@alpha.test', customerId: world.customerId })).id);
    assert.equal(
      (await createKey(app, { token }, { user: 'full@alpha.test', customer_id: world.customerId })).statusCode,
      409,
    );
    assert.equal((await rollKey(app, { token }, ids[0]!, { grace_period_seconds: 3600 })).statusCode, 201);
    const pos = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    assert.equal((await rollKey(app, { key: pos.api_key }, pos.id)).statusCode, 201);
  });

  it('of two rolls of one key at once, one wins and the other is a 409', async () => {
    const { app, world, token } = await setup();
    const old = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const results = await Promise.all(
      [1, 2, 3].map(() => rollKey(app, { token }, old.id, { grace_period_seconds: 600 })),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409]);
    assert.equal(json(results.find((r) => r.statusCode === 409)!).code, 'api_key_not_enabled');
    assert.equal(await keyCount(h.db.current.database), 2);
    assert.equal((await audits('api_key.rolled')).length, 1);
  });
});

describe('POST /v1/api-keys/{id}/roll: errors and security (nothing changes)', () => {
  it('refuses a grace period over 7 days, negative or fractional, with 400', async () => {
    const { app, world, token } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const before = await keysSnapshot(h.db.current.database);
    for (const grace of [604_801, -1, 1.5, '60']) {
      const res = await rollKey(app, { token }, key.id, { grace_period_seconds: grace });
      assert.equal(res.statusCode, 400, String(grace));
      assert.equal(json(res).errors[0].field, 'grace_period_seconds');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
    assert.equal(
      (await rollKey(app, { token }, key.id, { grace_period_seconds: 604_800 })).statusCode,
      201,
      '7 days is allowed',
    );
  });

  it('answers 409 api_key_not_enabled for a DELETED or EXPIRED key', async () => {
    const { app, token, ids } = await deletedAndExpiredKeys();
    const before = await keysSnapshot(h.db.current.database);
    for (const id of ids) {
      const res = await rollKey(app, { token }, id);
      assert.equal(res.statusCode, 409);
      assert.equal(json(res).code, 'api_key_not_enabled');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });

  it("answers 404 for another customer's key, another merchant's key and an unknown key", async () => {
    const { app, world, token } = await setup();
    const foreign = await issueKey(app, { user: 'x@beta.test', customerId: world.otherCustomerId });
    const mine = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const sibling = await issueKey(app, {
      user: 'pos2@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[1]!,
    });
    const otherToken = (await loginAs(app, world.otherLogin)).access_token;
    const before = await keysSnapshot(h.db.current.database);
    for (const res of [
      await rollKey(app, { token }, foreign.id),
      await rollKey(app, { token: otherToken }, mine.id),
      await rollKey(app, { key: mine.api_key }, sibling.id),
      await rollKey(app, { token }, uuid('f')),
    ]) {
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'api_key_not_found');
    }
    assert.equal(await keysSnapshot(h.db.current.database), before);
    assert.equal((await row(foreign.id)).replacedBy, null);
  });
});
