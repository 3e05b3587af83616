/** PATCH /v1/api-keys/{id} (docs/key-lifecycle.md): a key's name, expiry and rate limit, and who may change them. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { json, useTestApp } from '../helpers/app.js';
import {
  createKey,
  deletedAndExpiredKeys,
  inDays,
  keysSnapshot,
  rollKey,
  updateKey,
  whoAmI,
  merchantAndSiblingKeys,
} from '../helpers/api-keys.js';
import { customerSession, issueKey, uuid } from '../helpers/fixtures.js';
import { recordsOf } from '../helpers/records.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const setup = () => customerSession(h);
const { auditOf } = recordsOf(h);

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
    assert.equal((await auditOf('api_key.updated')).length, 1);
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
    const updated = await auditOf('api_key.updated');
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
    const { app, token, ids } = await deletedAndExpiredKeys(h);
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
    const { mine, sibling } = await merchantAndSiblingKeys(app, world);
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
