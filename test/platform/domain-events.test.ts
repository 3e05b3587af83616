/**
 * Every change writes its domain event in its own transaction, through the unit
 * of work (docs/design.md, "One write path"): one per change, of the change's
 * customer, never with a secret; a refused change writes none.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asc } from 'drizzle-orm';
import { domainEvents } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, deleteKey, rollKey, updateKey } from '../helpers/api-keys.js';
import { assertEventsMatchTheirSchemas } from '../helpers/event-schemas.js';
import { customerSession } from '../helpers/fixtures.js';
import { bulkAssign, seedCatalogue } from '../helpers/plans.js';

const h = useTestApp();

const events = () => h.db.current.database.db.select().from(domainEvents).orderBy(asc(domainEvents.createdAt));

describe('domain events', () => {
  it("writes one event per key change, the key masked, of the key's customer", async () => {
    const { app, world, token } = await customerSession(h);
    const created = await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.customerId });
    assert.equal(created.statusCode, 201);
    const key = json(created);
    assert.equal((await updateKey(app, { token }, key.id, { name: 'ci' })).statusCode, 200);
    const rolled = json(await rollKey(app, { token }, key.id));
    assert.equal((await deleteKey(app, { token }, rolled.id)).statusCode, 204);
    assert.equal((await deleteKey(app, { token }, rolled.id)).statusCode, 204, 'deleting again changes nothing');
    const written = await events();
    assert.deepEqual(
      written.map((e) => [e.type, e.customerId, (e.data as { id: string }).id]),
      [
        ['API_KEY_CREATED', world.customerId, key.id],
        ['API_KEY_UPDATED', world.customerId, key.id],
        ['API_KEY_ROLLED', world.customerId, rolled.id],
        ['API_KEY_REVOKED', world.customerId, rolled.id],
      ],
    );
    assertEventsMatchTheirSchemas(written);
    const text = JSON.stringify(written);
    assert.ok(!text.includes(key.api_key) && !text.includes(rolled.api_key), 'no event carries a full key');
    assert.ok(
      written.every((e) => /\*{4}/.test(String((e.data as { api_key: string }).api_key))),
      'the key is masked',
    );
    assert.ok(
      written.every((e) => typeof e.requestId === 'string' && e.requestId.length > 0),
      'each event names its request',
    );
  });

  it('writes none for a refused change', async () => {
    const { app, world, token } = await customerSession(h);
    const refused = await createKey(app, { token }, { user: 'ci@alpha.test', customer_id: world.otherCustomerId });
    assert.equal(refused.statusCode, 404);
    for (let i = 0; i < 10; i++)
      await createKey(app, { token }, { user: 'full@alpha.test', customer_id: world.customerId });
    const eleventh = await createKey(app, { token }, { user: 'full@alpha.test', customer_id: world.customerId });
    assert.equal(eleventh.statusCode, 409);
    const written = await events();
    assert.equal(written.length, 10);
    assertEventsMatchTheirSchemas(written);
  });

  it('writes FEE_RULES_ASSIGNED for an assignment that changes something, and none for one that changes nothing', async () => {
    const app = await h.app();
    const { world, plans, m0, headers } = await seedCatalogue(app);
    const body = { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] };
    assert.equal((await bulkAssign(app, headers, body)).statusCode, 201);
    assert.equal((await bulkAssign(app, headers, body)).statusCode, 201);
    const written = await events();
    assert.equal(written.length, 1);
    assert.equal(written[0]!.type, 'FEE_RULES_ASSIGNED');
    assert.equal(written[0]!.customerId, world.customerId);
    assert.deepEqual(
      written[0]!.data,
      {
        merchant_ids: [m0],
        payment_plan_ids: [plans.visa6.id],
        merchants: 1,
        merchants_changed: 1,
        assignments_added: 1,
        assignments_removed: 1,
        changes: [{ merchant_id: m0, added: [plans.visa6.id], removed: [plans.visa3.id] }],
      },
      'visa6 replaces visa3, of the same kind: the dry run shape of what changed',
    );
    assertEventsMatchTheirSchemas(written);
  });
});
