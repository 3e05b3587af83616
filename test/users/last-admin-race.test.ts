/**
 * No 500 from a race (contract section 19): two ADMINs, the customer's only
 * ones, demote or disable each other at the same moment. Each change locks its
 * target, then every enabled ADMIN, so the two lock the same rows in opposite
 * orders and PostgreSQL may end one with a deadlock: the unit of work runs it
 * again, and it finds the other change committed. Whatever the interleaving,
 * no answer is a 5xx other than 503 server_busy, and the customer always keeps
 * an ADMIN.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, count, eq } from 'drizzle-orm';
import { users } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { STRONG, userWithRole } from '../helpers/users.js';

const h = useTestApp();
const ROUNDS = 8;

/** Each round's pair of changes: what the first ADMIN does to the second and the second to the first. */
const CHANGES: Array<[Record<string, unknown>, Record<string, unknown>]> = [
  [{ enabled: false }, { enabled: false }],
  [{ role: 'MEMBER' }, { role: 'MEMBER' }],
  [{ role: 'VIEWER' }, { enabled: false }],
  [{ enabled: false }, { role: 'MEMBER' }],
];

describe('last ADMIN: concurrent changes of two ADMINs', () => {
  it(`never answers a 5xx but 503, and never leaves the customer without an ADMIN (${ROUNDS} rounds)`, async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const owner = { token: (await loginAs(app, world.login)).access_token, login: world.login };
    const other = await userWithRole(app, owner.token, 'second-admin@alpha.test', 'ADMIN');
    const second = { token: other.token, login: { user: 'second-admin@alpha.test', password: STRONG } };
    const ids = {
      owner: json(await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(owner.token) })).id,
      second: other.id,
    };
    const admins = async () =>
      (
        await h.db.current.database.db
          .select({ n: count() })
          .from(users)
          .where(and(eq(users.customerId, world.customerId), eq(users.role, 'ADMIN'), eq(users.enabled, true)))
      )[0]!.n;

    const seen = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const [toSecond, toOwner] = CHANGES[round % CHANGES.length]!;
      const answers = await Promise.all([
        app.inject({
          method: 'PATCH',
          url: `/v1/users/${ids.second}`,
          headers: bearer(owner.token),
          payload: toSecond,
        }),
        app.inject({ method: 'PATCH', url: `/v1/users/${ids.owner}`, headers: bearer(second.token), payload: toOwner }),
      ]);
      for (const answer of answers) {
        seen.set(answer.statusCode, (seen.get(answer.statusCode) ?? 0) + 1);
        assert.ok(
          answer.statusCode < 500 || answer.statusCode === 503,
          `round ${round}: ${answer.statusCode} ${answer.body}`,
        );
        if (answer.statusCode === 503) assert.equal(json(answer).code, 'server_busy');
        if (answer.statusCode === 409) assert.equal(json(answer).code, 'last_admin');
      }
      assert.equal(
        await admins(),
        1,
        `round ${round}: exactly one ADMIN is left (${answers.map((a) => a.statusCode)})`,
      );

      // Back to two ADMINs: whoever is still one restores the other, who logs in again.
      const survivor = answers[0]!.statusCode === 200 ? owner : second;
      const restored = survivor === owner ? second : owner;
      const restoredId = survivor === owner ? ids.second : ids.owner;
      const restore = await app.inject({
        method: 'PATCH',
        url: `/v1/users/${restoredId}`,
        headers: bearer(survivor.token),
        payload: { enabled: true, role: 'ADMIN' },
      });
      assert.equal(restore.statusCode, 200, restore.body);
      restored.token = (await loginAs(app, restored.login)).access_token;
      assert.equal(await admins(), 2);
    }
    assert.equal(seen.get(200), ROUNDS, `one change of each round succeeds: ${JSON.stringify([...seen])}`);
  });
});
