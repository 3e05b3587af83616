/**
 * Change requests asked through API keys (contract section 23): no one decides a
 * request they answer for: the user a key belongs to, whoever made it or rolled
 * it, through keys made by keys; and the request names the key's user.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { approve, getRequest, heldRequest, reject, underApproval } from '../helpers/change-requests.js';
import { type Credentials, createKey, rollKey } from '../helpers/api-keys.js';
import { apiKey, assignmentSnapshot, bulkAssign } from '../helpers/plans.js';
import { userWithRole } from '../helpers/users.js';

const h = useTestApp();

/** A key made through the API by `credentials`: its id and secret. */
async function madeKey(app: Awaited<ReturnType<typeof h.app>>, credentials: Credentials, body: object) {
  const res = await createKey(app, credentials, body);
  assert.equal(res.statusCode, 201, res.body);
  return json(res) as { id: string; api_key: string };
}

describe('change requests asked through API keys', () => {
  it('refuses, as self_approval, the ADMIN who made the key, or the key that made it; another ADMIN decides', async () => {
    const app = await h.app();
    const { maker, checker, token, plans, m0, world } = await underApproval(app);
    await userWithRole(app, token, 'member@alpha.test', 'MEMBER');
    const owner = { user: 'member@alpha.test', customer_id: world.customerId };
    // The maker's key for the member, and a key that key made: both lead back to the maker.
    const madeByMaker = (await madeKey(app, { token }, owner)).api_key;
    const madeByKey = (await madeKey(app, { key: madeByMaker }, owner)).api_key;
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
  });

  it("refuses the ADMIN a key belongs to, as well as its maker, and the login user of an integration key's e-mail", async () => {
    const app = await h.app();
    const { maker, checker, token, plans, m0, world } = await underApproval(app);
    const second = await userWithRole(app, token, 'second@alpha.test', 'ADMIN');
    const secondsKey = (await madeKey(app, { token }, { user: 'second@alpha.test', customer_id: world.customerId }))
      .api_key;
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

  it('refuses whoever rolled the key, by token or through a key they made, as well as its maker; a third ADMIN decides', async () => {
    const app = await h.app();
    const { maker, checker, token, plans, m0, world } = await underApproval(app);
    const third = await userWithRole(app, token, 'third@alpha.test', 'ADMIN');
    await userWithRole(app, token, 'member@alpha.test', 'MEMBER');
    const forMember = { user: 'member@alpha.test', customer_id: world.customerId };
    const makersKey = await madeKey(app, { token }, forMember);
    // The maker rolls the third ADMIN's keys, once by token and once through a key of their making.
    for (const roller of [{ token }, { key: makersKey.api_key }]) {
      const made = await madeKey(app, { token: third.token }, forMember);
      const rolled = await rollKey(app, roller, made.id);
      assert.equal(rolled.statusCode, 201, rolled.body);
      const held = heldRequest(
        await bulkAssign(app, apiKey(json(rolled).api_key), { merchant_ids: [m0], payment_plan_ids: [plans.visa6.id] }),
      );
      for (const reviewer of [maker, bearer(third.token)]) {
        const res = await approve(app, reviewer, held.id);
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(json(res).code, 'self_approval');
      }
      const rejected = await reject(app, checker, held.id, { reason: 'rolled by the maker' });
      assert.equal(json(rejected).status, 'REJECTED', rejected.body);
    }
  });
});
