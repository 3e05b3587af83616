/**
 * The password rule, third round (contract section 19): NFKC before hashing and
 * checking (login too), blank and invisible passwords refused, zxcvbn given the
 * first 100 characters only, and hashes made before normalisation still good.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash } from '@node-rs/argon2';
import { sql } from 'drizzle-orm';
import { ARGON2_OPTIONS } from '../../src/features/credentials/password-hasher.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';

const h = useTestApp();
const STRONG = 'mauve tractor juggles seven owls';
/** Full-width forms: NFKC makes them the ASCII letters and digits they look like. */
const fullWidth = (text: string) =>
  [...text].map((c) => (c === ' ' ? '\u3000' : String.fromCodePoint(c.codePointAt(0)! + 0xfee0))).join('');

async function setup() {
  const app = await h.app();
  const world = await seedWorld(app);
  const token = (await loginAs(app, world.login)).access_token;
  return { app, world, token };
}
type App = Awaited<ReturnType<typeof setup>>['app'];

const change = (app: App, token: string, current_password: string, new_password: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/users/me/password',
    headers: bearer(token),
    payload: { current_password, new_password },
  });

const login = (app: App, user: string, password: string) =>
  app.inject({ method: 'POST', url: '/v1/login', payload: { user, password } });

describe('passwords normalised with NFKC', () => {
  it('a full-width password and its ASCII look-alike are one password, both ways', async () => {
    const { app, world, token } = await setup();
    const wide = fullWidth('violet harbour 42 noon');
    assert.notEqual(wide, 'violet harbour 42 noon');
    assert.equal((await change(app, token, world.login.password, wide)).statusCode, 204);
    await loginAs(app, { user: world.login.user, password: 'violet harbour 42 noon' });
    const again = await loginAs(app, { user: world.login.user, password: wide });
    // Set in ASCII, typed full-width: the same.
    assert.equal((await change(app, again.access_token, 'violet harbour 42 noon', STRONG)).statusCode, 204);
    await loginAs(app, { user: world.login.user, password: fullWidth(STRONG) });
    assert.equal((await login(app, world.login.user, 'violet harbour 42 noon')).statusCode, 401);
  });

  it('keeps a hash made before normalisation good for the text as it was typed', async () => {
    const { app, world } = await setup();
    const legacy = `${fullWidth('Ｌegacy')} harbour ﬁve`;
    const stored = await hash(legacy, ARGON2_OPTIONS);
    await h.db.current.database.db.execute(
      sql`UPDATE users SET password_hash = ${stored} WHERE email = ${world.login.user}`,
    );
    await loginAs(app, { user: world.login.user, password: legacy });
    assert.equal((await login(app, world.login.user, 'wrong harbour five')).statusCode, 401);
  });

  it('refuses what is short after normalisation, blank or invisible, and writes nothing', async () => {
    const { app, world, token } = await setup();
    const refused = [
      `${'e\u0301'.repeat(7)}xyzq`, // 18 code points, 11 once composed
      ' '.repeat(16),
      '\u3000'.repeat(16),
      '\u200B'.repeat(16),
      '\u200C\u200D'.repeat(8),
      '\uFEFF'.repeat(16),
      '\u00AD'.repeat(16),
      '\u2060\u180E\u00A0\t\n'.repeat(4),
      `mauve${'\u200B'.repeat(12)}`,
    ];
    for (const weak of refused) {
      const res = await change(app, token, world.login.password, weak);
      assert.equal(res.statusCode, 400, JSON.stringify(weak));
      assert.equal(json(res).code, 'weak_password', JSON.stringify(weak));
    }
    await loginAs(app, { user: world.login.user, password: world.login.password });
  });
});

describe('the strength check measures 100 characters', () => {
  it('takes a long password whose first 100 characters are strong, whatever follows', async () => {
    const { app, world, token } = await setup();
    const strongHead = `${STRONG} ${'plum orbit cedar '.repeat(5)}`.slice(0, 100);
    const long = strongHead + 'a'.repeat(156);
    assert.equal([...long].length, 256);
    assert.equal((await change(app, token, world.login.password, long)).statusCode, 204);
    await loginAs(app, { user: world.login.user, password: long });
    const tooLong = await change(app, token, long, `${long}x`);
    assert.equal(json(tooLong).code, 'weak_password');
  });

  it('judges only the first 100: a weak start is refused whatever strong text follows it', async () => {
    const { app, world, token } = await setup();
    const res = await change(app, token, world.login.password, 'a'.repeat(100) + STRONG);
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).code, 'weak_password');
    await loginAs(app, { user: world.login.user, password: world.login.password });
  });
});
