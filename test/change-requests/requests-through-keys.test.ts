/**
 * Change requests asked through API keys (contract section 23): no one decides a
 * request they answer for, the user a key belongs to or whoever made it, through
 * keys made by keys; and the request names the key's user.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { approve, getRequest, heldRequest, reject, underApproval } from '../helpers/change-requests.js';
import { apiKey, assignmentSnapshot, bulkAssign, type Credentials } from '../helpers/plans.js';
import { userWithRole } from '../helpers/users.js';

const h = useTestApp();

async function createKey(app: Awaited<ReturnType<typeof h.app>>, headers: Credentials, body: object) {
  const res = await app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return json(res).api_key as string;
}

describe('change requests asked through API keys', () => {
  it('refuses, as self_approval, the ADMIN who made the key, or the key that made it; another ADMIN decides', async () => {
    const app = await h.app();
    const { maker, checker, token, plans, m0, world } = await underApproval(app);
    const member = await userWithRole(app, token, 'member@alpha.test', 'MEMBER');
    const owner = { user: 'member@alpha.test', customer_id: world.customerId };
    // The maker's key for the member, and a key that key made: both lead back to the maker.
    const madeByMaker = await createKey(app, maker, owner);
    const madeByKey = await createKey(app, apiKey(madeByMaker), owner);
    for (const key of [madeByMaker, madeByKey]) {
      const held = heldRequest(
        await bulkAssign(app, apiKey(key), { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      );
      assert.equal(held.requested_by.type, 'api_key');
      assert.equal(held.requested_by.email, 'member@alpha.test', "the key's user");
      const before = await assignmentSnapshot(h.db.current.database);
      for (const res of [await approve(app, maker, held.id), await reject(app, maker, held.id, { reason: 'mine' })]) {
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(json(res).code, 'self_approval');
      }
      assert.equal(json(await getRequest(app, checker, held.id)).status, 'PENDING');
      assert.deepEqual(await assignmentSnapshot(h.db.current.database), before, 'nothing changed');
      const approved = await approve(app, checker, held.id);
      assert.equal(approved.statusCode, 200, approved.body);
      assert.equal(json(approved).status, 'APPLIED');
    }
    assert.equal(member.id.length, 36);
  });

  it("refuses the ADMIN a key belongs to, as well as its maker, and the login user of an integration key's e-mail", async () => {
    const app = await h.app();
    const { maker, checker, token, plans, m0, world } = await underApproval(app);
    const second = await userWithRole(app, token, 'second@alpha.test', 'ADMIN');
    const secondsKey = await createKey(app, maker, { user: 'second@alpha.test', customer_id: world.customerId });
    // The operator's key for that address is an integration user's (a login user's e-mail is theirs alone to log in with).
    const integrationKey = await app.services.apiKeys.issueByOperator(
      { email: 'second@alpha.test', customerId: world.customerId, merchantId: null },
      { requestId: null, actor: { type: 'operator', id: null } },
      {},
    );
    const cases = [
      { key: secondsKey, refused: [bearer(second.token), maker] },
      { key: integrationKey.api_key, refused: [bearer(second.token)] },
    ];
    for (const { key, refused } of cases) {
      const held = heldRequest(
        await bulkAssign(app, apiKey(key), { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      );
      for (const reviewer of refused) {
        const res = await approve(app, reviewer, held.id);
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(json(res).code, 'self_approval');
      }
      const rejected = await reject(app, checker, held.id, { reason: 'not this week' });
      assert.equal(rejected.statusCode, 200, rejected.body);
      assert.equal(json(rejected).status, 'REJECTED');
      assert.equal(json(await getRequest(app, maker, held.id)).reviewed_by.email, 'checker@alpha.test');
    }
  });
});
