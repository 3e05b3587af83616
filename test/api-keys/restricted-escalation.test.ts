/**
 * No escalation of permissions and allowed addresses (contract sections 18 and
 * 22): a key creating or rolling keys gives at most what it has, omitted means
 * inherited, and it narrows itself by PATCH but never widens; a login's token
 * sets them freely. Changes are audited and emit API_KEY_UPDATED.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { auditEvents, domainEvents } from '../../src/db/schema.js';
import { json, type Injected, useTestApp } from '../helpers/app.js';
import { createKey, keysSnapshot, rollKey, updateKey } from '../helpers/api-keys.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';

const h = useTestApp();
const HELD = ['api_keys:read', 'api_keys:write', 'merchants:read'];
const RANGES = ['10.0.0.0/8', '2001:db8::/32'];
/** Requests from inside the creator's ranges. */
const INSIDE = '10.1.2.3';

/** A customer key holding HELD from RANGES, and the login's token. */
async function restrictedSetup() {
  const { app, world, token } = await customerSession(h);
  const key = await issueKey(
    app,
    { user: 'ci@alpha.test', customerId: world.customerId },
    {
      permissions: HELD as never,
      allowed_ips: RANGES,
    },
  );
  const as = (method: string, url: string, payload?: object) =>
    app.inject({
      method: method as 'POST',
      url,
      remoteAddress: INSIDE,
      headers: { 'x-api-key': key.api_key },
      ...(payload ? { payload } : {}),
    });
  return { app, world, token, key, as };
}

async function assertEscalation(res: Injected, what: string, before: string): Promise<void> {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
  assert.equal(json(res).code, 'key_escalation', what);
  assert.equal(await keysSnapshot(h.db.current.database), before, `${what}: nothing changed`);
}

describe('keys created by a restricted key', () => {
  it('inherit its permissions and ranges when none are sent; a read_only child takes only the reads', async () => {
    const { world, as } = await restrictedSetup();
    const child = json(await as('POST', '/v1/api-keys', { user: 'child@alpha.test', customer_id: world.customerId }));
    assert.deepEqual(child.permissions, HELD);
    assert.deepEqual(child.allowed_ips, RANGES);
    const reader = json(
      await as('POST', '/v1/api-keys', { user: 'r@alpha.test', customer_id: world.customerId, access: 'read_only' }),
    );
    assert.deepEqual(reader.permissions, ['api_keys:read', 'merchants:read']);
  });

  it('may ask for less: fewer permissions, ranges inside its own', async () => {
    const { world, as } = await restrictedSetup();
    const res = await as('POST', '/v1/api-keys', {
      user: 'child@alpha.test',
      customer_id: world.customerId,
      permissions: ['merchants:read'],
      allowed_ips: ['10.20.0.0/16', '2001:db8:5::1'],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(json(res).allowed_ips, ['10.20.0.0/16', '2001:db8:5::1']);
  });

  it('may not ask for a permission it lacks, a range outside its own, or any address', async () => {
    const { world, as } = await restrictedSetup();
    const before = await keysSnapshot(h.db.current.database);
    const base = { user: 'child@alpha.test', customer_id: world.customerId };
    const more = await as('POST', '/v1/api-keys', { ...base, permissions: ['merchants:read', 'webhooks:write'] });
    await assertEscalation(more, 'a permission it lacks', before);
    assert.match(json(more).detail, /webhooks:write/);
    await assertEscalation(
      await as('POST', '/v1/api-keys', { ...base, allowed_ips: ['192.168.0.0/16'] }),
      'a range outside',
      before,
    );
    await assertEscalation(
      await as('POST', '/v1/api-keys', { ...base, allowed_ips: ['10.0.0.0/7'] }),
      'a range around its own',
      before,
    );
    await assertEscalation(await as('POST', '/v1/api-keys', { ...base, allowed_ips: [] }), 'any address', before);
  });

  it("keeps a merchant key's scope: a merchant key made by a restricted key holds no more either", async () => {
    const { world, as } = await restrictedSetup();
    const pos = json(
      await as('POST', '/v1/api-keys', {
        user: 'pos@alpha.test',
        customer_id: world.customerId,
        merchant_id: world.merchantIds[0],
      }),
    );
    assert.deepEqual(pos.permissions, HELD);
    const listed = await h.app().then((app) =>
      app.inject({
        method: 'GET',
        url: '/v1/merchants',
        remoteAddress: INSIDE,
        headers: { 'x-api-key': pos.api_key },
      }),
    );
    assert.equal(listed.statusCode, 200);
    assert.ok(!listed.body.includes(world.merchantIds[1]!), 'only its own merchant');
  });
});

describe('rolls by a restricted key', () => {
  it('roll itself into a key of the same permissions and ranges, and not a key that has more', async () => {
    const { app, world, token, key, as } = await restrictedSetup();
    const wider = json(await createKey(app, { token }, { user: 'wide@alpha.test', customer_id: world.customerId }));
    const before = await keysSnapshot(h.db.current.database);
    await assertEscalation(await as('POST', `/v1/api-keys/${wider.id}/roll`), 'rolling a key with more', before);
    const rolled = await as('POST', `/v1/api-keys/${key.id}/roll`);
    assert.equal(rolled.statusCode, 201, rolled.body);
    assert.deepEqual(json(rolled).permissions, HELD);
    assert.deepEqual(json(rolled).allowed_ips, RANGES);
    const byToken = json(await rollKey(app, { token }, wider.id));
    assert.equal(byToken.permissions.length, 10, 'a login rolls any key, its successor as it was');
  });
});

describe('PATCH of permissions and allowed addresses', () => {
  it('lets a key narrow itself, never widen; the narrowed key is refused at once', async () => {
    const { key, as } = await restrictedSetup();
    const before = await keysSnapshot(h.db.current.database);
    await assertEscalation(
      await as('PATCH', `/v1/api-keys/${key.id}`, { permissions: [...HELD, 'audit:read'] }),
      'adding a permission',
      before,
    );
    await assertEscalation(
      await as('PATCH', `/v1/api-keys/${key.id}`, { allowed_ips: [...RANGES, '192.168.0.0/16'] }),
      'adding a range',
      before,
    );
    await assertEscalation(await as('PATCH', `/v1/api-keys/${key.id}`, { allowed_ips: [] }), 'any address', before);
    const narrowed = await as('PATCH', `/v1/api-keys/${key.id}`, {
      permissions: ['api_keys:read', 'api_keys:write'],
      allowed_ips: ['10.1.0.0/16'],
    });
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    assert.deepEqual(json(narrowed).permissions, ['api_keys:read', 'api_keys:write']);
    const merchants = await as('GET', '/v1/merchants');
    assert.equal(json(merchants).code, 'insufficient_permissions', 'the cached key changed with it');
  });

  it('lets a login set them freely, audited and as API_KEY_UPDATED; a read_only key gets no write', async () => {
    const { app, world, token, key } = await restrictedSetup();
    const res = await updateKey(app, { token }, key.id, {
      permissions: ['webhooks:read', 'audit:read'],
      allowed_ips: ['0.0.0.0/0', '::/0'],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res).allowed_ips, ['0.0.0.0/0', '::/0']);
    const db = h.db.current.database.db;
    const [audit] = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, 'api_key.updated'), eq(auditEvents.targetId, key.id)));
    assert.deepEqual((audit!.details as { permissions: string[] }).permissions, ['webhooks:read', 'audit:read']);
    const events = await db.select().from(domainEvents).where(eq(domainEvents.type, 'API_KEY_UPDATED'));
    assert.deepEqual(
      events.map((e) => (e.data as { permissions: string[] }).permissions),
      [['webhooks:read', 'audit:read']],
    );
    const reader = json(
      await createKey(app, { token }, { user: 'r@alpha.test', customer_id: world.customerId, access: 'read_only' }),
    );
    const before = await keysSnapshot(h.db.current.database);
    const write = await updateKey(app, { token }, reader.id, { permissions: ['merchants:write'] });
    assert.equal(write.statusCode, 400);
    assert.equal(json(write).errors[0].field, 'permissions[0]');
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });
});
