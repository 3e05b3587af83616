/**
 * A key never grants more than it has (docs/key-lifecycle.md): what a key
 * creates, rolls or changes stays within its own expiry, rate limit and access.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { json, useTestApp } from '../helpers/app.js';
import {
  assertEscalation,
  createKey,
  inDays,
  keysSnapshot,
  LIMITED_KEY_RATE,
  limitedKeySession,
  rollKey,
  updateKey,
} from '../helpers/api-keys.js';

const h = useTestApp();
const limitedSetup = () => limitedKeySession(h);

describe('keys created with a key: inherit at most what the creator has', () => {
  it('take the creating key’s expiry, rate limit and access when none are sent', async () => {
    const { app, world, creds, expiresAt } = await limitedSetup();
    const res = await createKey(app, creds, { user: 'child@alpha.test', customer_id: world.customerId });
    assert.equal(res.statusCode, 201, res.body);
    const child = json(res);
    assert.equal(child.expires_at, expiresAt);
    assert.deepEqual(child.rate_limit, LIMITED_KEY_RATE);
    assert.equal(child.access, 'full');
    // A merchant key made by the customer key inherits the same.
    const pos = json(
      await createKey(app, creds, {
        user: 'pos@alpha.test',
        customer_id: world.customerId,
        merchant_id: world.merchantIds[0],
      }),
    );
    assert.deepEqual([pos.expires_at, pos.rate_limit], [expiresAt, LIMITED_KEY_RATE]);
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
      rate_limit: LIMITED_KEY_RATE,
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
    assert.deepEqual([json(res).expires_at, json(res).rate_limit], [expiresAt, LIMITED_KEY_RATE]);
  });

  it('refuses to roll a key that has more than the caller (403 key_escalation), and rolls one that has less', async () => {
    const { app, world, token, creds } = await limitedSetup();
    const free = json(await createKey(app, { token }, { user: 'free@alpha.test', customer_id: world.customerId }));
    const later = json(
      await createKey(
        app,
        { token },
        {
          user: 'later@alpha.test',
          customer_id: world.customerId,
          expires_at: inDays(40),
          rate_limit: LIMITED_KEY_RATE,
        },
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
