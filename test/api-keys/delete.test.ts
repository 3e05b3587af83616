import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, auditEvents } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { deleteKey, headersFor, listKeys, merchantAndSiblingKeys } from '../helpers/api-keys.js';
import { customerSession, issueKey, loginAs, uuid } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

const setup = () => customerSession(h);

const me = (app: Awaited<ReturnType<typeof h.app>>, key: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: headersFor({ key }) });

describe('DELETE /v1/api-keys/{id}: happy', () => {
  it('answers 204, refuses the key at once, keeps it in DELETED listings, audits; again 204', async () => {
    const { app, world, token } = await setup();
    const key = await issueKey(app, { user: 'a@alpha.test', customerId: world.customerId });
    assert.equal((await me(app, key.api_key)).statusCode, 200);
    const res = await deleteKey(app, { token }, key.id);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const refused = await me(app, key.api_key);
    assert.equal(refused.statusCode, 401);
    assert.equal(json(refused).code, 'invalid_api_key');
    const deleted = json(await listKeys(app, { token }, '?status=DELETED'));
    assert.deepEqual(
      deleted.data.map((k: { id: string }) => k.id),
      [key.id],
    );
    assert.equal((await deleteKey(app, { token }, key.id)).statusCode, 204);
    const audit = await h.db.current.database.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'api_key.deleted'));
    assert.equal(audit.length, 1, 'deleting twice records one change');
  });

  it("lets a customer delete its merchants' keys, and a merchant its own", async () => {
    const { app, world, token } = await setup();
    const pos = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const pos2 = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    assert.equal((await deleteKey(app, { token }, pos.id)).statusCode, 204);
    assert.equal((await deleteKey(app, { key: pos2.api_key }, pos2.id)).statusCode, 204);
  });
});

describe('DELETE /v1/api-keys/{id}: errors and security', () => {
  it("answers 404 for unknown keys, other customers' keys and, for merchants, other merchants' keys; nothing changes", async () => {
    const { app, world, token } = await setup();
    const foreign = await issueKey(app, { user: 'b@beta.test', customerId: world.otherCustomerId });
    const customerKey = await issueKey(app, { user: 'a@alpha.test', customerId: world.customerId });
    const { mine: pos, sibling } = await merchantAndSiblingKeys(app, world);
    const unknown = await deleteKey(app, { token }, uuid('f'));
    const other = await deleteKey(app, { token }, foreign.id);
    assert.equal(unknown.statusCode, 404);
    assert.equal(other.statusCode, 404);
    assert.equal(json(unknown).detail, json(other).detail);
    assert.equal((await deleteKey(app, { key: pos.api_key }, sibling.id)).statusCode, 404);
    assert.equal((await deleteKey(app, { key: pos.api_key }, customerKey.id)).statusCode, 404);
    const statuses = await h.db.current.database.db.select({ status: apiKeys.status }).from(apiKeys);
    assert.ok(statuses.every((s) => s.status === 'ENABLED'));
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const { app, token } = await setup();
    const res = await deleteKey(app, { token }, 'not-a-uuid');
    assert.equal(res.statusCode, 400);
  });
});

/** Polls for up to a second: pushed changes arrive in milliseconds. */
const seenBySecond = (condition: () => Promise<boolean>) =>
  waitFor(condition, 'the other instance saw the change within a second', { timeoutMs: 1000 });

describe('revocation across instances', () => {
  it('a key deleted through one instance is refused by another within a second', async () => {
    const { app, world, token } = await setup();
    // A second, independent instance: its own connection pool and its own LISTEN connection.
    const url = h.db.current.url;
    const secondDb = url ? await openDatabase({ databaseUrl: url }) : h.db.current.database;
    const second = await buildApp({ config: testConfig(), database: secondDb, ownsDatabase: url !== undefined });
    try {
      const key = await issueKey(app, { user: 'a@alpha.test', customerId: world.customerId });
      // Warm the second instance's caches: the verified key and a listing page.
      assert.equal((await me(second, key.api_key)).statusCode, 200);
      assert.equal((await me(second, key.api_key)).statusCode, 200);
      const otherToken = (await loginAs(second, world.login)).access_token;
      const enabledIds = async () =>
        json(await listKeys(second, { token: otherToken })).data.map((k: { id: string }) => k.id);
      assert.deepEqual(await enabledIds(), [key.id]);
      assert.equal((await deleteKey(app, { token }, key.id)).statusCode, 204);
      await seenBySecond(async () => (await me(second, key.api_key)).statusCode === 401);
      // Its listings learn of the change as quickly (they are cached briefly).
      await seenBySecond(async () => (await enabledIds()).length === 0);
      assert.deepEqual(
        json(await listKeys(second, { token: otherToken }, '?status=DELETED')).data.map((k: { id: string }) => k.id),
        [key.id],
      );
      const fresh = await issueKey(app, { user: 'b@alpha.test', customerId: world.customerId });
      await seenBySecond(async () =>
        json(await listKeys(second, { token: otherToken })).data.some((k: { id: string }) => k.id === fresh.id),
      );
      await deleteKey(app, { token }, fresh.id);
      await seenBySecond(async () => json(await listKeys(second, { token: otherToken })).page.total_elements === 0);
    } finally {
      await second.close();
    }
  });
});
