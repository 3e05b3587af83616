/**
 * Keys name their creator (created_by), and disabling a user with revoke_keys
 * revokes every key it created, as DELETE would: audited, emitted, refused at
 * once on every instance (contract section 19).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { auditEvents, domainEvents } from '../../src/db/schema.js';
import { bearer, json, secondInstance, useTestApp } from '../helpers/app.js';
import { createKey, listKeys, rollKey, whoAmI } from '../helpers/api-keys.js';
import { customerSession, issueKey, loginAs } from '../helpers/fixtures.js';
import { STRONG, userWithRole } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
type App = Awaited<ReturnType<typeof h.app>>;
const setup = () => customerSession(h);

async function userId(app: App, token: string, email: string): Promise<string> {
  const res = await app.inject({ method: 'GET', url: `/v1/users?email=${email}`, headers: bearer(token) });
  return json(res).users[0].attributes.id;
}

const member = (app: App, admin: string, email: string) => userWithRole(app, admin, email);

const listed = async (app: App, token: string, id: string, status = 'ENABLED') =>
  json(await listKeys(app, { token }, `?status=${status}&size=100`)).data.find((k: { id: string }) => k.id === id);

describe('created_by', () => {
  it('names the login user, the API key or the operator that created a key, in answers and listings', async () => {
    const { app, world, token } = await setup();
    const adminId = await userId(app, token, world.login.user);
    const byUser = await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    assert.equal(byUser.statusCode, 201, byUser.body);
    const userCreator = { type: 'user', id: adminId, email: world.login.user };
    assert.deepEqual(json(byUser).created_by, userCreator);
    assert.deepEqual((await listed(app, token, json(byUser).id)).created_by, userCreator);
    const byKey = await createKey(
      app,
      { key: json(byUser).api_key },
      { user: 'ci2@alpha.test', customer_id: world.customerId },
    );
    assert.equal(byKey.statusCode, 201, byKey.body);
    const keyCreator = { type: 'api_key', id: json(byUser).id, email: 'ci@alpha.test' };
    assert.deepEqual(json(byKey).created_by, keyCreator);
    assert.deepEqual((await listed(app, token, json(byKey).id)).created_by, keyCreator);
    const byOperator = await issueKey(app, { user: 'ops@alpha.test', customerId: world.customerId });
    assert.deepEqual((await listed(app, token, byOperator.id)).created_by, { type: 'operator', id: null, email: null });
    // A roll's successor keeps the creator of the key it replaces.
    const rolled = await rollKey(app, { token }, json(byKey).id);
    assert.equal(rolled.statusCode, 201, rolled.body);
    assert.deepEqual(json(rolled).created_by, keyCreator);
    // Keys made before creators were recorded have none.
    await h.db.current.database.db.execute(
      sql`UPDATE api_keys SET created_by_type = NULL, created_by_id = NULL, created_by_email = NULL WHERE id = ${byOperator.id}`,
    );
    assert.equal((await listed(app, token, byOperator.id)).created_by, null);
  });
});

describe('PATCH /v1/users/{id} { enabled: false, revoke_keys: true }', () => {
  it('revokes every key the user created, and the keys those made, on every instance, as DELETE does', async () => {
    const { app, world, token } = await setup();
    const leaving = await member(app, token, 'leaving@alpha.test');
    const made = json(
      await createKey(app, { token: leaving.token }, { user: 'ci@alpha.test', customer_id: world.customerId }),
    );
    const madeByMade = json(
      await createKey(app, { key: made.api_key }, { user: 'ci2@alpha.test', customer_id: world.customerId }),
    );
    const kept = json(await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId }));
    const second = await secondInstance(h);
    try {
      // Both instances have verified (and cached) every key.
      for (const instance of [app, second])
        for (const key of [made, madeByMade, kept]) assert.equal((await whoAmI(instance, key.api_key)).statusCode, 200);
      const res = await app.inject({
        method: 'PATCH',
        url: `/v1/users/${leaving.id}`,
        headers: bearer(token),
        payload: { enabled: false, revoke_keys: true },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).status, 'DISABLED');
      for (const key of [made, madeByMade]) {
        assert.equal((await whoAmI(app, key.api_key)).statusCode, 401);
        // Told by NOTIFY: the design's bound is milliseconds, never more than 5 s.
        await waitFor(
          async () => (await whoAmI(second, key.api_key)).statusCode === 401,
          'refused on the other instance',
        );
        assert.equal((await listed(app, token, key.id, 'DELETED'))?.status, 'DELETED');
      }
      assert.equal((await whoAmI(second, kept.api_key)).statusCode, 200, "another user's key stays");
      const db = h.db.current.database.db;
      const audits = await db.select().from(auditEvents).where(eq(auditEvents.action, 'api_key.deleted'));
      assert.deepEqual(audits.map((a) => a.targetId).sort(), [made.id, madeByMade.id].sort());
      const events = await db.select().from(domainEvents).where(eq(domainEvents.type, 'API_KEY_REVOKED'));
      assert.equal(events.length, 2);
    } finally {
      await second.close();
    }
  });

  it('disabling without revoke_keys leaves the keys the user created working', async () => {
    const { app, world, token } = await setup();
    const staying = await member(app, token, 'staying@alpha.test');
    const made = json(
      await createKey(app, { token: staying.token }, { user: 'ci@alpha.test', customer_id: world.customerId }),
    );
    for (const payload of [{ enabled: false }, { enabled: true, revoke_keys: false }]) {
      const res = await app.inject({
        method: 'PATCH',
        url: `/v1/users/${staying.id}`,
        headers: bearer(token),
        payload,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    assert.equal((await whoAmI(app, made.api_key)).statusCode, 200);
    await loginAs(app, { user: 'staying@alpha.test', password: STRONG });
    // revoke_keys alone: the user stays enabled, its keys go.
    const alone = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${staying.id}`,
      headers: bearer(token),
      payload: { revoke_keys: true },
    });
    assert.equal(json(alone).status, 'CONFIRMED');
    assert.equal((await whoAmI(app, made.api_key)).statusCode, 401);
  });
});
