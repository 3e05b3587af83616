/**
 * Four-eyes approval of fee changes (contract section 23): the customer's
 * policy, assignments held as change requests after their checks, and their
 * approval applying them through the same code path, in one transaction.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { auditEvents, changeRequests, domainEvents } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import {
  approve,
  cancelRequest,
  getRequest,
  heldRequest,
  listRequests,
  reject,
  setPolicy,
  underApproval,
} from '../helpers/change-requests.js';
import { issueKey } from '../helpers/fixtures.js';
import { apiKey, assignmentSnapshot, bulkAssign, bulkAssignAll, plansByMerchant } from '../helpers/plans.js';
import { userWithRole } from '../helpers/users.js';

const h = useTestApp();
const db = () => h.db.current.database.db;
const snapshot = () => assignmentSnapshot(h.db.current.database);
const storedRequests = () => db().select().from(changeRequests);
const eventsOf = (type: string) => db().select().from(domainEvents).where(eq(domainEvents.type, type));
const auditOf = (action: string) => db().select().from(auditEvents).where(eq(auditEvents.action, action));

describe('the approval policy on /v1/customers/me', () => {
  it('is NONE by default and set by an ADMIN; assignments then answer 201 as before', async () => {
    const app = await h.app();
    const { headers, plans, m0 } = await (await import('../helpers/plans.js')).seedCatalogue(app);
    const me = await app.inject({ method: 'GET', url: '/v1/customers/me', headers });
    assert.deepEqual(json(me).approval_policy, { fee_changes: 'NONE' });
    const res = await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await storedRequests()).length, 0);
    const set = await setPolicy(app, headers, 'REQUIRED');
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(json(set).approval_policy, { fee_changes: 'REQUIRED' });
    assert.equal(json(set).require_mfa, false, 'require_mfa left out stays');
    const again = await app.inject({ method: 'GET', url: '/v1/customers/me', headers });
    assert.deepEqual(json(again).approval_policy, { fee_changes: 'REQUIRED' });
  });

  it('refuses a MEMBER, a key and an unknown setting, changing nothing', async () => {
    const app = await h.app();
    const { world, token, maker } = await underApproval(app);
    await setPolicy(app, maker, 'NONE');
    const member = await userWithRole(app, token, 'member@alpha.test', 'MEMBER');
    const key = await issueKey(app, { user: world.login.user, customerId: world.customerId });
    for (const [who, headers, status, code] of [
      ['MEMBER', bearer(member.token), 403, 'insufficient_role'],
      ['key', apiKey(key.api_key), 403, 'insufficient_role'],
    ] as const) {
      const res = await setPolicy(app, headers, 'REQUIRED');
      assert.equal(res.statusCode, status, `${who}: ${res.body}`);
      assert.equal(json(res).code, code);
    }
    for (const payload of [{ approval_policy: { fee_changes: 'SOMETIMES' } }, { approval_policy: 'REQUIRED' }]) {
      const res = await app.inject({ method: 'PATCH', url: '/v1/customers/me', headers: maker, payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    const me = await app.inject({ method: 'GET', url: '/v1/customers/me', headers: maker });
    assert.deepEqual(json(me).approval_policy, { fee_changes: 'NONE' });
  });
});

describe('under REQUIRED, an assignment becomes a change request', () => {
  it('answers 202 with the request and its dry run, stores it, changes no assignment; a dry run is answered as before', async () => {
    const app = await h.app();
    const { maker, plans, m0, m1 } = await underApproval(app);
    const before = await snapshot();
    const body = { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa6.id] };
    const dry = await bulkAssign(app, maker, body, '?dry_run=true');
    assert.equal(dry.statusCode, 200, dry.body);
    assert.equal((await storedRequests()).length, 0, 'a dry run holds nothing');
    const held = heldRequest(await bulkAssign(app, maker, body));
    assert.equal(held.status, 'PENDING');
    assert.equal(held.operation, 'fee_rules.bulk_assign');
    assert.deepEqual(held.request, { method: 'POST', path: '/v1/fee-rules/bulk-assign', body });
    assert.deepEqual(held.preview, json(dry));
    assert.equal(held.requested_by.type, 'user');
    assert.equal(held.requested_by.email, 'owner@alpha.test');
    assert.equal(Date.parse(held.expires_at) - Date.parse(held.create_date), 7 * 86_400_000);
    assert.deepEqual(await snapshot(), before);
    assert.equal((await eventsOf('CHANGE_REQUEST_CREATED')).length, 1);
    assert.equal((await eventsOf('FEE_RULES_ASSIGNED')).length, 0);
  });

  it('a key asks for /all the same way', async () => {
    const app = await h.app();
    const { world, plans } = await underApproval(app);
    const key = await issueKey(app, { user: world.login.user, customerId: world.customerId });
    const held = heldRequest(await bulkAssignAll(app, apiKey(key.api_key), { payment_plan_ids: [plans.visa6.id] }));
    assert.equal(held.operation, 'fee_rules.bulk_assign_all');
    assert.deepEqual(held.requested_by, { type: 'api_key', id: key.id, email: world.login.user }, "the key's user");
  });

  it('a request that would be a 400 or a 422 still is, and nothing is held', async () => {
    const app = await h.app();
    const { maker, plans, m0 } = await underApproval(app);
    const before = await snapshot();
    const bad = [
      [{ merchant_ids: [], payment_plan_ids: [plans.visa6.id] }, 400],
      [{ merchant_ids: [m0], payment_plan_ids: ['not-a-uuid'] }, 400],
      [{ merchant_ids: [m0], payment_plan_ids: [plans.foreign.id] }, 422],
      [{ merchant_ids: [m0], payment_plan_ids: [plans.visa6.id], effective_at: '2000-01-01T00:00:00Z' }, 400],
    ] as const;
    for (const [body, status] of bad) {
      const res = await bulkAssign(app, maker, body);
      assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
    }
    assert.equal((await storedRequests()).length, 0);
    assert.deepEqual(await snapshot(), before);
  });
});

describe('approving applies the change through the same path', () => {
  it('another ADMIN approves: APPLIED with its result, the same assignments an immediate change makes, audit and events naming both', async () => {
    const app = await h.app();
    const { maker, checker, checkerId, plans, m0, m1, world } = await underApproval(app);
    const body = { merchant_ids: [m0, m1], payment_plan_ids: [plans.visa6.id, plans.visa1Own.id] };
    const held = heldRequest(await bulkAssign(app, maker, body));
    const res = await approve(app, checker, held.id);
    assert.equal(res.statusCode, 200, res.body);
    const applied = json(res);
    assert.equal(applied.status, 'APPLIED');
    assert.deepEqual(applied.reviewed_by, { type: 'user', id: checkerId, email: 'checker@alpha.test' });
    const { dry_run: _dryRun, ...effect } = held.preview;
    assert.deepEqual(applied.result, effect, 'what it did is what its preview said');
    assert.ok(applied.applied_at);
    const byMerchant = await plansByMerchant(h.db.current.database);
    for (const m of [m0, m1]) {
      assert.ok(byMerchant.get(m)!.includes(plans.visa6.id));
      assert.ok(byMerchant.get(m)!.includes(plans.visa1Own.id));
      assert.ok(!byMerchant.get(m)!.includes(plans.visa1.id), 'the replacement rule dropped visa1');
    }
    const [audit] = await auditOf('fee_rules.bulk_assign');
    assert.equal(audit!.actorId, checkerId);
    const named = (audit!.details as Record<string, any>).change_request;
    assert.equal(named.id, held.id);
    assert.equal(named.requested_by.id, held.requested_by.id);
    assert.equal(named.approved_by.id, checkerId);
    assert.equal((await eventsOf('FEE_RULES_ASSIGNED')).length, 1);
    const [approved] = await eventsOf('CHANGE_REQUEST_APPROVED');
    assert.equal((approved!.data as Record<string, any>).status, 'APPLIED');
    assert.equal(approved!.customerId, world.customerId);
    const listed = json(await listRequests(app, maker, '?status=APPLIED'));
    assert.deepEqual(
      listed.data.map((r: { id: string }) => r.id),
      [held.id],
    );
  });

  it('refuses the requester, a MEMBER, a VIEWER, a key and another customer, changing nothing', async () => {
    const app = await h.app();
    const { maker, token, plans, m0, world } = await underApproval(app);
    const held = heldRequest(await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }));
    const before = await snapshot();
    const member = await userWithRole(app, token, 'member@alpha.test', 'MEMBER');
    const viewer = await userWithRole(app, token, 'viewer@alpha.test', 'VIEWER');
    const key = await issueKey(app, { user: world.login.user, customerId: world.customerId });
    const other = (await (await import('../helpers/fixtures.js')).loginAs(app, world.otherLogin)).access_token;
    for (const [who, headers, status, code] of [
      ['requester', maker, 403, 'self_approval'],
      ['MEMBER', bearer(member.token), 403, 'insufficient_role'],
      ['VIEWER', bearer(viewer.token), 403, 'insufficient_role'],
      ['key', apiKey(key.api_key), 403, 'insufficient_role'],
      ['another customer', bearer(other), 404, 'change_request_not_found'],
    ] as const) {
      for (const res of [await approve(app, headers, held.id), await reject(app, headers, held.id, { reason: 'no' })]) {
        assert.equal(res.statusCode, status, `${who}: ${res.body}`);
        assert.equal(json(res).code, code, who);
      }
    }
    assert.equal((await getRequest(app, bearer(other), held.id)).statusCode, 404);
    assert.equal(json(await getRequest(app, maker, held.id)).status, 'PENDING');
    assert.deepEqual(await snapshot(), before);
  });

  it('a closed request answers 409 change_request_closed to approve, reject and cancel', async () => {
    const app = await h.app();
    const { maker, checker, plans, m0 } = await underApproval(app);
    const held = heldRequest(await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }));
    assert.equal((await approve(app, checker, held.id)).statusCode, 200);
    const after = await snapshot();
    for (const res of [
      await approve(app, checker, held.id),
      await reject(app, checker, held.id, { reason: 'late' }),
      await cancelRequest(app, maker, held.id),
    ]) {
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(json(res).code, 'change_request_closed');
      assert.equal(json(res).status, 'APPLIED');
    }
    assert.deepEqual(await snapshot(), after);
    assert.equal((await eventsOf('FEE_RULES_ASSIGNED')).length, 1);
  });
});

describe('reject and cancel', () => {
  it('another ADMIN rejects with a reason (required); the requester cancels; neither changes assignments', async () => {
    const app = await h.app();
    const { maker, checker, checkerId, plans, m0 } = await underApproval(app);
    const before = await snapshot();
    const body = { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] };
    const first = heldRequest(await bulkAssign(app, maker, body));
    for (const payload of [{}, { reason: '' }, { reason: ' \t\n ' }]) {
      const res = await reject(app, checker, first.id, payload);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).errors[0].field, 'reason', res.body);
    }
    assert.equal(json(await getRequest(app, checker, first.id)).status, 'PENDING', 'nothing decided');
    const rejected = await reject(app, checker, first.id, { reason: 'not this quarter' });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(json(rejected).status, 'REJECTED');
    assert.equal(json(rejected).reason, 'not this quarter');
    assert.equal(json(rejected).reviewed_by.id, checkerId);
    assert.equal((await eventsOf('CHANGE_REQUEST_REJECTED')).length, 1);
    const second = heldRequest(await bulkAssign(app, maker, body));
    const notMine = await cancelRequest(app, checker, second.id);
    assert.equal(notMine.statusCode, 403);
    assert.equal(json(notMine).code, 'not_requester');
    const cancelled = await cancelRequest(app, maker, second.id);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(json(cancelled).status, 'CANCELLED');
    assert.deepEqual(await snapshot(), before);
    const listed = json(await listRequests(app, maker));
    assert.deepEqual(
      listed.data.map((r: { id: string }) => r.id),
      [second.id, first.id],
      'newest first',
    );
  });

  it('refuses a reason of only zero-width, invisible or blank characters, as one of only white space: still PENDING', async () => {
    const app = await h.app();
    const { maker, checker, plans, m0 } = await underApproval(app);
    const before = await snapshot();
    const held = heldRequest(await bulkAssign(app, maker, { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }));
    const invisible = ['\u200B', '\u200C\u200D\u2060\uFEFF', ' \u200B\t\u2060 \uFEFF\n\u200D '];
    // Blanks that Unicode files as letters (Hangul fillers) or symbols (blank braille, the null notehead).
    const blanks = ['\u3164', '\u115F\u1160', ' \uFFA0 ', '\u2800\u2800', '\u{1D159}', '\u3164\u200B\u2800'];
    for (const reason of [...invisible, ...blanks]) {
      const res = await reject(app, checker, held.id, { reason });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).errors[0].field, 'reason', res.body);
    }
    const stored = json(await getRequest(app, checker, held.id));
    assert.equal(stored.status, 'PENDING', 'nothing decided');
    assert.equal(stored.reason, null);
    assert.equal((await eventsOf('CHANGE_REQUEST_REJECTED')).length, 0);
    assert.deepEqual(await snapshot(), before);
    // A visible character among invisible ones says something.
    const rejected = await reject(app, checker, held.id, { reason: '\u200B\u3164no\u2800' });
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal(json(rejected).status, 'REJECTED');
  });
});
