import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema.js';
import { generateApiKey, isWellFormedApiKey } from '../../src/features/api-keys/api-key-format.js';
import { json, useTestApp } from '../helpers/app.js';
import { headersFor, listKeys } from '../helpers/api-keys.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

async function setup() {
  const app = await h.app({ lastUsedFlushMs: 200 });
  const world = await seedWorld(app);
  return { app, world };
}

const me = (app: Awaited<ReturnType<typeof h.app>>, key: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: headersFor({ key }) });

describe('X-Api-Key authentication', () => {
  it('authenticates a customer key and a merchant key with their scope', async () => {
    const { app, world } = await setup();
    const customer = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const merchant = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const c = json(await me(app, customer.api_key));
    assert.deepEqual(
      { ...c, id: undefined },
      {
        id: undefined,
        user: 'ci@alpha.test',
        user_type: 'CUSTOMER',
        customer_id: world.customerId,
        merchant_id: null,
        auth: 'api_key',
      },
    );
    const m = json(await me(app, merchant.api_key));
    assert.equal(m.user_type, 'MERCHANT');
    assert.equal(m.merchant_id, world.merchantIds[0]);
  });

  it('refuses malformed, wrong-checksum and unknown keys with 401 and WWW-Authenticate', async () => {
    const { app, world } = await setup();
    const real = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const flipped = real.api_key.slice(0, 10) + (real.api_key[10] === 'a' ? 'b' : 'a') + real.api_key.slice(11);
    for (const key of ['nonsense', 'fgk_short', flipped, generateApiKey(), `${real.api_key}x`]) {
      const res = await me(app, key);
      assert.equal(res.statusCode, 401, key);
      assert.equal(json(res).code, 'invalid_api_key');
      assert.ok(res.headers['www-authenticate']);
    }
  });

  it('checks the checksum without the database', () => {
    const key = generateApiKey();
    assert.ok(isWellFormedApiKey(key));
    assert.equal(key.length, 42);
    const typo = key.slice(0, 20) + (key[20] === 'Z' ? 'Y' : 'Z') + key.slice(21);
    assert.equal(isWellFormedApiKey(typo), false);
  });

  it('refuses logout with an API key (403)', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const res = await app.inject({ method: 'POST', url: '/v1/logout', headers: headersFor({ key: key.api_key }) });
    assert.equal(res.statusCode, 403);
  });
});

describe('last_used_at', () => {
  it('is null until first use, then the listing shows that use within 5 seconds', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const token = (await loginAs(app, world.login)).access_token;
    const listed = async () => json(await listKeys(app, { token })).data[0].last_used_at as string | null;
    assert.equal(await listed(), null);
    const usedAt = Date.now();
    await me(app, key.api_key);
    await waitFor(async () => (await listed()) !== null, 'last_used_at is shown within 5 s', {
      timeoutMs: 5000 - (Date.now() - usedAt),
      intervalMs: 100,
    });
    const lastUsed = await listed();
    assert.ok(lastUsed);
    assert.ok(Math.abs(Date.parse(lastUsed) - usedAt) < 1500, `${lastUsed} is the time of the use`);
  });

  it('does not change update_date', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const [before] = await h.db.current.database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
    await me(app, key.api_key);
    await app.close(); // flushes pending uses
    const [after] = await h.db.current.database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
    assert.ok(after!.lastUsedAt);
    assert.equal(after!.updatedAt.getTime(), before!.updatedAt.getTime());
  });
});
