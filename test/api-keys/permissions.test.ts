/**
 * Restricted keys, what they may do (contract section 22): permissions from the
 * catalogue, defaulted from access, checked by the authentication hook against
 * what each route declares, for keys and login roles alike; every operation is
 * refused to a key lacking its permission, generated from the route table.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { PERMISSIONS, type Permission } from '../../src/lib/permissions.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, keyCount, keysSnapshot, listKeys } from '../helpers/api-keys.js';
import { customerSession, issueKey, uuid } from '../helpers/fixtures.js';
import { openapiDocument } from '../helpers/openapi.js';
import { userWithRole } from '../helpers/users.js';

const h = useTestApp();
const READS = PERMISSIONS.filter((p) => p.endsWith(':read'));
const call = (app: Awaited<ReturnType<typeof h.app>>, key: string, method: string, url: string, payload?: object) =>
  app.inject({ method: method as 'GET', url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });

describe('permissions of a new key', () => {
  it('default from access: full holds every permission, read_only every :read', async () => {
    const { app, world, token } = await customerSession(h);
    const full = json(await createKey(app, { token }, { user: 'a@alpha.test', customer_id: world.customerId }));
    assert.deepEqual(full.permissions, [...PERMISSIONS]);
    assert.deepEqual(full.allowed_ips, []);
    const reader = json(
      await createKey(app, { token }, { user: 'b@alpha.test', customer_id: world.customerId, access: 'read_only' }),
    );
    assert.deepEqual(reader.permissions, READS);
    const listed = json(await listKeys(app, { token })).data as Array<{ id: string; permissions: string[] }>;
    assert.deepEqual(listed.find((k) => k.id === reader.id)?.permissions, READS, 'listings show them');
  });

  it('are kept in catalogue order, and only those given', async () => {
    const { app, world, token } = await customerSession(h);
    const res = await createKey(
      app,
      { token },
      { user: 'a@alpha.test', customer_id: world.customerId, permissions: ['fee_rules:write', 'merchants:read'] },
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(json(res).permissions, ['merchants:read', 'fee_rules:write']);
  });

  it('refuses an unknown permission, or a write on a read_only key, naming the item; nothing is created', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await keysSnapshot(h.db.current.database);
    const unknown = await createKey(
      app,
      { token },
      { user: 'a@alpha.test', customer_id: world.customerId, permissions: ['merchants:read', 'merchants:delete'] },
    );
    assert.equal(unknown.statusCode, 400);
    assert.equal(json(unknown).code, 'validation_failed');
    assert.equal(json(unknown).errors[0].field, 'permissions[1]');
    const writeOnReader = await createKey(
      app,
      { token },
      { user: 'a@alpha.test', customer_id: world.customerId, access: 'read_only', permissions: ['merchants:write'] },
    );
    assert.equal(writeOnReader.statusCode, 400);
    assert.equal(json(writeOnReader).errors[0].field, 'permissions[0]');
    assert.match(json(writeOnReader).errors[0].message, /merchants:write/);
    assert.equal(await keysSnapshot(h.db.current.database), before);
    assert.equal(await keyCount(h.db.current.database), 0);
  });
});

describe('the check before the operation', () => {
  it('lets a key do what it holds and refuses the rest with required_permission, before reading anything', async () => {
    const { app, world } = await customerSession(h);
    const key = await issueKey(
      app,
      { user: 'm@alpha.test', customerId: world.customerId },
      {
        permissions: ['merchants:read'],
      },
    );
    assert.equal((await call(app, key.api_key, 'GET', '/v1/merchants')).statusCode, 200);
    const refused = await call(app, key.api_key, 'GET', '/v1/payment-plans');
    assert.equal(refused.statusCode, 403);
    assert.equal(json(refused).code, 'insufficient_permissions');
    assert.equal(json(refused).required_permission, 'fee_rules:read');
    // An invalid body is not even read: the permission is checked first.
    const write = await call(app, key.api_key, 'POST', '/v1/merchants', { nonsense: true });
    assert.equal(json(write).code, 'insufficient_permissions');
    assert.equal(json(write).required_permission, 'merchants:write');
    // Operations that need no permission stay open to it.
    assert.equal((await call(app, key.api_key, 'GET', '/v1/users/me')).statusCode, 200);
  });

  it("keeps a merchant key's merchant scope on top of its permissions", async () => {
    const { app, world } = await customerSession(h);
    const [own, sibling] = world.merchantIds as [string, string];
    const key = await issueKey(
      app,
      { user: 'pos@alpha.test', customerId: world.customerId, merchantId: own },
      {
        permissions: ['merchants:read', 'fee_rules:read', 'fee_rules:write'],
      },
    );
    const listed = json(await call(app, key.api_key, 'GET', '/v1/merchants'));
    assert.deepEqual(
      JSON.stringify(listed).includes(sibling),
      false,
      'a merchant key lists only its own merchant, whatever its permissions',
    );
    assert.equal((await call(app, key.api_key, 'GET', `/v1/merchants/${sibling}`)).statusCode, 404);
    const assign = await call(app, key.api_key, 'POST', '/v1/fee-rules/bulk-assign/all', {
      payment_plan_ids: [uuid()],
    });
    assert.equal(assign.statusCode, 403);
    assert.equal(json(assign).code, 'forbidden', 'fee_rules:write does not lift the merchant scope');
    const noWebhooks = await call(app, key.api_key, 'GET', '/v1/webhooks');
    assert.equal(json(noWebhooks).code, 'insufficient_permissions');
  });

  it("maps a login's role onto the catalogue: a VIEWER holds every :read, and is refused a write with required_permission", async () => {
    const { app, token } = await customerSession(h);
    const viewer = await userWithRole(app, token, 'viewer@alpha.test', 'VIEWER');
    const headers = { authorization: `Bearer ${viewer.token}` };
    for (const url of ['/v1/audit-events', '/v1/webhooks', '/v1/users', '/v1/api-keys', '/v1/fee-rules'])
      assert.equal((await app.inject({ method: 'GET', url, headers })).statusCode, 200, url);
    const refused = await app.inject({
      method: 'POST',
      url: '/v1/fee-rules/bulk-assign/all',
      headers,
      payload: { payment_plan_ids: [uuid()] },
    });
    assert.equal(refused.statusCode, 403);
    assert.equal(json(refused).code, 'insufficient_role');
  });
});

describe('every operation, from the route table', () => {
  it('declares its permission in the OpenAPI document (x-feegate-permission) when it authenticates', async () => {
    const doc = await openapiDocument(await h.app());
    const undeclared: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(methods)) {
        const declared = op['x-feegate-permission'];
        if ((op.security ?? []).length > 0 && !(declared === 'none' || PERMISSIONS.includes(declared)))
          undeclared.push(`${method.toUpperCase()} ${path}`);
        if (declared !== undefined) assert.match(op.description, /permission/, `${method} ${path} says it`);
      }
    assert.deepEqual(undeclared, []);
  });

  it('will not start with an authenticated route that declares no permission', async () => {
    const app = await buildApp({ config: testConfig(), database: h.db.current.database });
    try {
      assert.throws(
        () => app.get('/v1/undeclared', { onRequest: app.authenticate, handler: async () => ({}) }),
        /declares no permission/,
      );
    } finally {
      await app.close();
    }
  });

  it('refuses each operation to a key holding every other permission, naming the one it needs', async () => {
    const { app, world } = await customerSession(h);
    const doc = await openapiDocument(app);
    const keys = new Map<Permission, string>();
    for (const [i, missing] of PERMISSIONS.entries()) {
      const key = await issueKey(
        app,
        { user: `lacks-${i}@alpha.test`, customerId: world.customerId },
        {
          permissions: PERMISSIONS.filter((p) => p !== missing),
        },
      );
      keys.set(missing, key.api_key);
    }
    const before = await keysSnapshot(h.db.current.database);
    let checked = 0;
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(methods)) {
        const needed = op['x-feegate-permission'] as Permission | 'none' | undefined;
        if (needed === undefined || needed === 'none') continue;
        const url = path.replace(/\{[^}]+\}/g, () => uuid());
        const res = await call(app, keys.get(needed)!, method.toUpperCase(), url, method === 'get' ? undefined : {});
        assert.equal(res.statusCode, 403, `${method} ${path}: ${res.body}`);
        assert.equal(json(res).code, 'insufficient_permissions', `${method} ${path}`);
        assert.equal(json(res).required_permission, needed, `${method} ${path}`);
        checked++;
      }
    assert.ok(checked >= 30, `${checked} operations checked`);
    assert.equal(await keysSnapshot(h.db.current.database), before, 'nothing was changed');
  });
});
