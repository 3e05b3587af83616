/**
 * API_KEY_EXPIRING: written by the sweep, through the unit of work, 7 days
 * before a key's expires_at, once per expiry (again when the expiry moves),
 * never for keys that are deleted, rolled, already expired or further off; and
 * delivered like any event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asc, eq, sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { apiKeys, domainEvents } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, deleteKey, updateKey } from '../helpers/api-keys.js';
import { customerSession } from '../helpers/fixtures.js';
import { deliveringTo, startReceiver, subscribe } from '../helpers/webhooks.js';

const h = useTestApp();
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

async function expiringEvents() {
  return h.db.current.database.db
    .select()
    .from(domainEvents)
    .where(eq(domainEvents.type, 'API_KEY_EXPIRING'))
    .orderBy(asc(domainEvents.createdAt));
}

describe('API_KEY_EXPIRING', () => {
  it('is written once for a key that expires within 7 days, and again when its expiry moves', async () => {
    const { app, world, token } = await customerSession(h);
    const owner = { customer_id: world.customerId };
    const soon = json(await createKey(app, { token }, { user: 'a@alpha.test', ...owner, expires_at: inDays(6) }));
    const later = json(await createKey(app, { token }, { user: 'b@alpha.test', ...owner, expires_at: inDays(8) }));
    const deleted = json(await createKey(app, { token }, { user: 'c@alpha.test', ...owner, expires_at: inDays(2) }));
    await createKey(app, { token }, { user: 'd@alpha.test', ...owner });
    await deleteKey(app, { token }, deleted.id);

    assert.equal(await app.services.apiKeys.warnExpiring(), 1);
    assert.equal(await app.services.apiKeys.warnExpiring(), 0, 'once');
    const [event] = await expiringEvents();
    assert.equal(event!.customerId, world.customerId);
    assert.equal((event!.data as { id: string }).id, soon.id);
    assert.match((event!.data as { api_key: string }).api_key, /\*{4}/);
    assert.equal((event!.data as { expires_at: string }).expires_at, soon.expires_at);

    assert.equal((await updateKey(app, { token }, soon.id, { expires_at: inDays(5) })).statusCode, 200);
    assert.equal(await app.services.apiKeys.warnExpiring(), 1, 'a moved expiry is warned of again');
    // Time passes for the other key: it now expires within 7 days.
    await h.db.current.database.db
      .update(apiKeys)
      .set({ expiresAt: sql`now() + interval '3 days'` })
      .where(eq(apiKeys.id, later.id));
    assert.equal(await app.services.apiKeys.warnExpiring(), 1);
    assert.equal(await app.services.apiKeys.warnExpiring(), 0);
    assert.deepEqual(
      (await expiringEvents()).map((e) => (e.data as { id: string }).id),
      [soon.id, soon.id, later.id],
    );
  });

  it('is swept and delivered by the worker', async () => {
    const receiver = await startReceiver();
    try {
      const { app, world, token } = await customerSession(h, deliveringTo(receiver));
      await subscribe(app, { token }, receiver.url, ['API_KEY_EXPIRING']);
      const key = json(
        await createKey(app, { token }, { user: 'a@alpha.test', customer_id: world.customerId, expires_at: inDays(1) }),
      );
      // An instance sweeps when it starts (then every minute).
      const started = await buildApp({ config: testConfig(deliveringTo(receiver)), database: h.db.current.database });
      try {
        const [got] = await receiver.waitFor(1);
        const event = JSON.parse(got!.body);
        assert.equal(event.type, 'API_KEY_EXPIRING');
        assert.equal(event.data.id, key.id);
        assert.equal(event.request_id, null);
      } finally {
        await started.close();
      }
    } finally {
      await receiver.close();
    }
  });
});
