/** POST /v1/api-keys/{id}/roll (docs/key-lifecycle.md): a new key with the same settings, the grace period, and who may roll. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import {
  createKey,
  deletedAndExpiredKeys,
  inDays,
  keyCount,
  keysSnapshot,
  listKeys,
  rollKey,
  whoAmI,
  merchantAndSiblingKeys,
} from '../helpers/api-keys.js';
import { customerSession, issueKey, loginAs, uuid } from '../helpers/fixtures.js';
import { recordsOf } from '../helpers/records.js';

const h = useTestApp();
const setup = () => customerSession(h);
const { auditOf } = recordsOf(h);
const row = async (id: string) => (await h.db.current.database.db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0]!;

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
    const rolled = await auditOf('api_key.rolled');
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
    assert.equal((await auditOf('api_key.rolled')).length, 1);
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
    const { app, token, ids } = await deletedAndExpiredKeys(h);
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
    const { mine, sibling } = await merchantAndSiblingKeys(app, world);
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
