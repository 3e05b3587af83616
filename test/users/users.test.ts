/** Back-office users: roles in tokens, and the ADMIN's operations on users. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { domainEvents } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey, loginAs } from '../helpers/fixtures.js';
import { auditActions, createUser, STRONG, userWithRole } from '../helpers/users.js';

const h = useTestApp();

describe('roles', () => {
  it('carries the role in the access token; existing and imported users are ADMIN', async () => {
    const { token: admin } = await customerSession(h);
    const claims = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.role, 'ADMIN');
  });

  it('lets a VIEWER read but refuses every write with 403 insufficient_role, and writes nothing', async () => {
    const { app, world, token: admin } = await customerSession(h);
    const viewer = await userWithRole(app, admin, 'viewer@alpha.test', 'VIEWER');
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/api-keys', headers: bearer(viewer.token) })).statusCode,
      200,
    );
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(viewer.token) })).statusCode,
      200,
    );
    const writes = [
      { method: 'POST', url: '/v1/api-keys', payload: { user: 'ci@alpha.test', customer_id: world.customerId } },
      {
        method: 'POST',
        url: '/v1/fee-rules/bulk-assign',
        payload: { merchant_ids: world.merchantIds, payment_plan_ids: [] },
      },
      { method: 'POST', url: '/v1/users', payload: { email: 'x@alpha.test' } },
      { method: 'PATCH', url: `/v1/users/${viewer.id}`, payload: { role: 'ADMIN' } },
      { method: 'POST', url: `/v1/users/${viewer.id}/reset-password` },
      { method: 'PATCH', url: '/v1/customers/me', payload: { require_mfa: true } },
    ] as const;
    for (const write of writes) {
      const res = await app.inject({ ...write, headers: bearer(viewer.token) });
      assert.equal(res.statusCode, 403, `${write.method} ${write.url}: ${res.body}`);
      assert.equal(json(res).code, 'insufficient_role');
    }
    const listed = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(admin) }));
    assert.equal(listed.metadata.total_elements, 2);
    const listedViewer = (listed.users as Array<{ attributes: { id: string; role: string } }>).find(
      (u) => u.attributes.id === viewer.id,
    );
    assert.equal(listedViewer?.attributes.role, 'VIEWER');
    // A VIEWER still changes its own password and logs out.
    const own = await app.inject({
      method: 'POST',
      url: '/v1/users/me/password',
      headers: bearer(viewer.token),
      payload: { current_password: STRONG, new_password: 'a quiet violet harbour at noon' },
    });
    assert.equal(own.statusCode, 204, own.body);
    assert.equal(
      (await app.inject({ method: 'POST', url: '/v1/logout', headers: bearer(viewer.token) })).statusCode,
      204,
    );
  });

  it('lets a MEMBER work but not manage users; API keys never manage users', async () => {
    const { app, world, token: admin } = await customerSession(h);
    const member = await userWithRole(app, admin, 'member@alpha.test', 'MEMBER');
    const key = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(member.token),
      payload: { user: 'ci@alpha.test', customer_id: world.customerId },
    });
    assert.equal(key.statusCode, 201, key.body);
    const refused = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(member.token),
      payload: { email: 'y@alpha.test' },
    });
    assert.equal(json(refused).code, 'insufficient_role');
    const apiKey = json(key).api_key;
    for (const write of [
      { method: 'POST', url: '/v1/users', payload: { email: 'z@alpha.test' } },
      { method: 'PATCH', url: `/v1/users/${member.id}`, payload: { enabled: false } },
      { method: 'POST', url: `/v1/users/${member.id}/reset-password` },
    ] as const) {
      const res = await app.inject({ ...write, headers: { 'x-api-key': apiKey } });
      assert.equal(res.statusCode, 403);
      assert.equal(json(res).code, 'insufficient_role');
    }
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users', headers: { 'x-api-key': apiKey } })).statusCode,
      200,
    );
    const merchantKey = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const merchantList = await app.inject({
      method: 'GET',
      url: '/v1/users',
      headers: { 'x-api-key': merchantKey.api_key },
    });
    assert.equal(merchantList.statusCode, 403);
  });
});

describe('POST/GET/PATCH /v1/users', () => {
  it('creates a login user with a temporary password shown once, audited and emitted without secrets', async () => {
    const { app, world, token: admin } = await customerSession(h);
    const created = await createUser(app, admin, { email: 'Ana@Alpha.test', name: 'Ana', description: 'payments' });
    assert.equal(created.attributes.email, 'ana@alpha.test');
    assert.equal(created.attributes.role, 'MEMBER');
    assert.equal(created.attributes.scope, 'LOGIN');
    assert.deepEqual(created.attributes.customer_id, [world.customerId]);
    assert.equal(created.status, 'FORCE_CHANGE_PASSWORD');
    assert.equal(typeof created.temporary_password, 'string');
    const listed = json(
      await app.inject({ method: 'GET', url: '/v1/users?email=ANA@alpha.test', headers: bearer(admin) }),
    );
    assert.equal(listed.users.length, 1);
    assert.equal(listed.users[0].temporary_password, undefined);
    const conflict = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(admin),
      payload: { email: 'ana@alpha.test' },
    });
    assert.equal(conflict.statusCode, 409);
    assert.equal(json(conflict).code, 'user_conflict');
    const events = await h.db.current.database.db.select().from(domainEvents);
    assert.deepEqual(
      events.map((e) => e.type),
      ['USER_CREATED'],
    );
    const [event] = events;
    assert.ok(event);
    assert.equal((event.data as { attributes: { email: string } }).attributes.email, 'ana@alpha.test');
    assert.ok(!JSON.stringify(events[0]?.data).includes(created.temporary_password));
    const audit = JSON.stringify(await auditActions(app, admin));
    assert.match(audit, /user\.created/);
    assert.ok(!audit.includes(created.temporary_password));
  });

  it('refuses bad input with 400 naming the field and writes nothing', async () => {
    const { app, token: admin } = await customerSession(h);
    const bad = [
      { email: 'nul\u0000@alpha.test' },
      { email: 'a@alpha.test', name: 'x'.repeat(300) },
      { email: 'a@alpha.test', role: 'OWNER' },
      { email: 'a@alpha.test', name: 1e21 },
      { email: 'a@alpha.test', extra: true },
    ];
    for (const payload of bad) {
      const res = await app.inject({ method: 'POST', url: '/v1/users', headers: bearer(admin), payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    const listed = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(admin) }));
    assert.equal(listed.metadata.total_elements, 1);
  });

  it("answers 404 for another customer's user, upper-case ids work, and the last ADMIN is protected", async () => {
    const { app, world, token: admin } = await customerSession(h);
    const other = (await loginAs(app, world.otherLogin)).access_token;
    const otherList = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(other) }));
    const otherId = otherList.users[0].attributes.id;
    const cross = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${otherId}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    assert.equal(cross.statusCode, 404);
    assert.equal(json(cross).code, 'user_not_found');
    const reset = await app.inject({
      method: 'POST',
      url: `/v1/users/${otherId}/reset-password`,
      headers: bearer(admin),
    });
    assert.equal(reset.statusCode, 404);
    const mine = json(await app.inject({ method: 'GET', url: '/v1/users', headers: bearer(admin) })).users[0].attributes
      .id;
    const demote = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${mine.toUpperCase()}`,
      headers: bearer(admin),
      payload: { role: 'MEMBER' },
    });
    assert.equal(demote.statusCode, 409);
    assert.equal(json(demote).code, 'last_admin');
    const disable = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${mine}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    assert.equal(json(disable).code, 'last_admin');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(admin) })).statusCode, 200);
  });

  it('ends the sessions of a user whose role changes or who is disabled; a disabled user cannot log in', async () => {
    const { app, token: admin } = await customerSession(h);
    const member = await userWithRole(app, admin, 'member@alpha.test', 'MEMBER');
    const demoted = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${member.id}`,
      headers: bearer(admin),
      payload: { role: 'VIEWER', name: 'Mem' },
    });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.equal(json(demoted).attributes.role, 'VIEWER');
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(member.token) })).statusCode,
      401,
    );
    const again = (await loginAs(app, { user: 'member@alpha.test', password: STRONG })).access_token;
    const disabled = await app.inject({
      method: 'PATCH',
      url: `/v1/users/${member.id}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    assert.equal(json(disabled).status, 'DISABLED');
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(again) })).statusCode, 401);
    const login = await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: 'member@alpha.test', password: STRONG },
    });
    assert.equal(login.statusCode, 401);
    assert.equal(json(login).code, 'invalid_credentials');
    const audit = JSON.stringify(await auditActions(app, admin));
    assert.match(audit, /user\.disabled/);
    assert.match(audit, /user\.updated/);
  });

  it('disabling an integration user refuses its keys until it is enabled again', async () => {
    const { app, world, token: admin } = await customerSession(h);
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const headers = { 'x-api-key': key.api_key };
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers })).statusCode, 200);
    const list = json(
      await app.inject({ method: 'GET', url: '/v1/users?email=ci@alpha.test', headers: bearer(admin) }),
    );
    const id = list.users[0].attributes.id;
    assert.equal(list.users[0].attributes.scope, 'API_KEY');
    assert.equal(list.users[0].attributes.role, null);
    await app.inject({ method: 'PATCH', url: `/v1/users/${id}`, headers: bearer(admin), payload: { enabled: false } });
    const refused = await app.inject({ method: 'GET', url: '/v1/users/me', headers });
    assert.equal(refused.statusCode, 401);
    await app.inject({ method: 'PATCH', url: `/v1/users/${id}`, headers: bearer(admin), payload: { enabled: true } });
    assert.equal((await app.inject({ method: 'GET', url: '/v1/users/me', headers })).statusCode, 200);
  });
});
