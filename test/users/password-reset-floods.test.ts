/**
 * A flood of guesses at one name's reset code (contract section 19): the checks
 * of a name take their turns, and only WAITING_CHECKS_PER_NAME of them may wait
 * on an instance; the rest are refused at once with 429 and Retry-After, known
 * user or not, while other names' checks go on as before.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { WAITING_CHECKS_PER_NAME } from '../../src/features/users/password-resets.js';
import { json, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { userWithRole } from '../helpers/users.js';

const h = useTestApp();
const FLOOD = WAITING_CHECKS_PER_NAME * 2;

it('refuses guesses beyond the waiting bound of a name with 429 and Retry-After; another name is answered as before', async () => {
  const app = await h.app({ rateLimitAnonymousPerMinute: 0 });
  const world = await seedWorld(app);
  await userWithRole(app, (await loginAs(app, world.login)).access_token, 'flooded@alpha.test');
  const guess = (user: string, i: number) =>
    app.inject({
      method: 'POST',
      url: '/v1/login/confirm-forgot-password',
      payload: { user, code: String(100_000 + i), new_password: 'a quiet violet harbour at noon' },
    });
  for (const user of ['flooded@alpha.test', 'nobody@alpha.test']) {
    const answers = await Promise.all([
      ...Array.from({ length: FLOOD }, (_, i) => guess(user, i)),
      guess('bystander@alpha.test', 0),
    ]);
    const bystander = answers.pop()!;
    assert.equal(json(bystander).code, 'invalid_code', 'another name is not held up by the flood');
    const refused = answers.filter((res) => res.statusCode === 429);
    const checked = answers.filter((res) => res.statusCode === 400);
    assert.equal(refused.length + checked.length, FLOOD, answers.map((res) => res.statusCode).join());
    // Every guess arrives long before the first check's floor is over, but a slow machine may let a few in late.
    assert.ok(checked.length >= WAITING_CHECKS_PER_NAME, `${user}: ${checked.length} checked`);
    assert.ok(refused.length >= WAITING_CHECKS_PER_NAME / 2, `${user}: ${refused.length} refused`);
    for (const res of checked) assert.equal(json(res).code, 'invalid_code');
    for (const res of refused) {
      assert.equal(json(res).code, 'rate_limited');
      assert.ok(Number(res.headers['retry-after']) >= 1, `Retry-After ${res.headers['retry-after']}`);
    }
    // The queue is gone once the flood is answered.
    assert.equal(json(await guess(user, FLOOD)).code, 'invalid_code');
  }
});
