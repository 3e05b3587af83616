/**
 * Forgotten and reset passwords, third round (contract section 19): the code is
 * checked first and every refusal looks the same; guesses and mails are bounded
 * per user across codes, in the database; an ADMIN's reset, a disable and a
 * re-enable void pending challenges and codes; TOTP survives a forgotten
 * password, and an ADMIN's reset of a TOTP user mails the password only.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { totpCode } from '../../src/features/credentials/totp.js';
import { REFUSAL_FLOOR_MS } from '../../src/features/users/password-resets.js';
import { bearer, json, secondInstance, useTestApp } from '../helpers/app.js';
import { enableTotp } from '../helpers/mfa.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { STRONG, smtpServer, userWithRole } from '../helpers/users.js';

const h = useTestApp();
const NEWER = 'a quiet violet harbour at noon';

/** A real SMTP server on loopback for the whole file: every message it receives. */
const received: string[] = [];
const smtp = smtpServer(received);
let smtpUrl = '';
before(async () => {
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

async function setup(mail = true) {
  const app = await h.app(mail ? { smtpUrl, smtpFrom: 'feegate <noreply@alpha.test>' } : {});
  const world = await seedWorld(app);
  const admin = (await loginAs(app, world.login)).access_token;
  return { app, world, admin };
}
type App = Awaited<ReturnType<typeof setup>>['app'];

const confirmedUser = (app: App, admin: string, email: string) => userWithRole(app, admin, email);

/** Mails received for `email` whose text matches `kind`. */
const mailsOf = (email: string, kind: RegExp) => received.filter((m) => m.includes(`To: ${email}`) && kind.test(m));

async function waitForMails(email: string, kind: RegExp, count: number): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  while (mailsOf(email, kind).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return mailsOf(email, kind);
}

/** Asks for a code and answers it once it arrives (the n-th code mail of the user). */
async function requestCode(app: App, email: string): Promise<string> {
  const before = mailsOf(email, /reset code/).length;
  const res = await app.inject({ method: 'POST', url: '/v1/login/forgot-password', payload: { user: email } });
  assert.equal(res.statusCode, 202);
  await app.services.users.stop();
  const mails = await waitForMails(email, /reset code/, before + 1);
  assert.equal(mails.length, before + 1, 'one more code mail');
  return /\n(\d{6})\r?\n/.exec(mails.at(-1)!)![1]!;
}

const wrongOf = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');

function confirm(app: App, user: string, code: string, new_password = NEWER) {
  return app.inject({
    method: 'POST',
    url: '/v1/login/confirm-forgot-password',
    payload: { user, code, new_password },
  });
}

/** The problem document without what differs per request. */
function problem(res: Awaited<ReturnType<App['inject']>>): Record<string, unknown> {
  const { instance: _instance, request_id: _requestId, ...rest } = json(res);
  return { status: res.statusCode, ...rest };
}

describe('POST /v1/login/confirm-forgot-password', () => {
  it('refuses an unknown, a disabled, an integration user and a wrong code alike, before judging the password', async () => {
    const { app, world, admin } = await setup();
    await confirmedUser(app, admin, 'forgot@alpha.test');
    const gone = await confirmedUser(app, admin, 'gone@alpha.test');
    const code = await requestCode(app, 'forgot@alpha.test');
    const goneCode = await requestCode(app, 'gone@alpha.test');
    await app.inject({
      method: 'PATCH',
      url: `/v1/users/${gone.id}`,
      headers: bearer(admin),
      payload: { enabled: false },
    });
    await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    // A weak password with each: the code is judged first, so none of them says weak_password.
    const attempts: Array<[string, string]> = [
      ['nobody@alpha.test', code],
      ['gone@alpha.test', goneCode],
      ['ci@alpha.test', code],
      ['forgot@alpha.test', wrongOf(code, 0)],
    ];
    const answers = [];
    for (const [user, given] of attempts) {
      const started = performance.now();
      const res = await confirm(app, user, given, 'short');
      // The unknown name's refusal (a hash) as late as the known user's (a transaction): the floor, not less.
      const took = performance.now() - started;
      assert.ok(took >= REFUSAL_FLOOR_MS - 1, `${user} refused after ${took.toFixed(1)} ms`);
      answers.push(problem(res));
    }
    assert.equal(answers[0]!.code, 'invalid_code');
    assert.equal(answers[0]!.status, 400);
    for (const answer of answers.slice(1)) assert.deepEqual(answer, answers[0]);
    // Nothing changed: the password is the old one, and the right code still works once.
    await loginAs(app, { user: 'forgot@alpha.test', password: STRONG });
    const weak = await confirm(app, 'forgot@alpha.test', code, 'short');
    assert.equal(json(weak).code, 'weak_password', 'the right code, then the password is judged');
    const ok = await confirm(app, 'forgot@alpha.test', code);
    assert.equal(ok.statusCode, 204, ok.body);
    await loginAs(app, { user: 'forgot@alpha.test', password: NEWER });
    assert.equal(json(await confirm(app, 'forgot@alpha.test', code)).code, 'invalid_code', 'spent');
  });

  it('answers a burst of guesses at a name one at a time, a floor apart, whether the user exists or not', async () => {
    const { app, admin } = await setup();
    await confirmedUser(app, admin, 'burst@alpha.test');
    const code = await requestCode(app, 'burst@alpha.test');
    const BURST = 4;
    for (const user of ['burst@alpha.test', 'nobody@alpha.test']) {
      const started = performance.now();
      const answered = await Promise.all(
        Array.from({ length: BURST }, async (_, i) => {
          const res = await confirm(app, user, wrongOf(code, i));
          assert.equal(json(res).code, 'invalid_code');
          return performance.now() - started;
        }),
      );
      // Side by side they would all answer after one floor; in turn, the last after BURST of them.
      const last = Math.max(...answered);
      assert.ok(last >= BURST * REFUSAL_FLOOR_MS - 1, `${user}: the last of ${BURST} after ${last.toFixed(0)} ms`);
    }
  });

  it('allows 10 wrong codes per user an hour across all its codes: then even the right one is refused', async () => {
    const { app, admin } = await setup();
    for (const email of ['locked@alpha.test', 'spared@alpha.test']) await confirmedUser(app, admin, email);
    // Three codes (the most mails an hour), 4 + 4 + wrong guesses on the last: never 5 on one code.
    const guess = async (email: string, lastWrong: number) => {
      let code = '';
      for (const wrong of [4, 4, lastWrong]) {
        code = await requestCode(app, email);
        for (let i = 0; i < wrong; i++)
          assert.equal(json(await confirm(app, email, wrongOf(code, i))).code, 'invalid_code');
      }
      return code;
    };
    const locked = await guess('locked@alpha.test', 2);
    const refused = await confirm(app, 'locked@alpha.test', locked);
    assert.equal(refused.statusCode, 400);
    assert.equal(json(refused).code, 'invalid_code', 'the 11th guess, the right code, is refused');
    await loginAs(app, { user: 'locked@alpha.test', password: STRONG });
    // Nine wrong guesses leave the tenth: the right code works.
    const spared = await guess('spared@alpha.test', 1);
    assert.equal((await confirm(app, 'spared@alpha.test', spared)).statusCode, 204);
  });

  it('counts parallel wrong guesses on two instances under one budget kept in the database', async () => {
    const { app, admin } = await setup();
    await confirmedUser(app, admin, 'race@alpha.test');
    const second = await secondInstance(h, { smtpUrl, smtpFrom: 'feegate <noreply@alpha.test>' });
    try {
      let code = '';
      // 4 + 4 + 2 wrong guesses, half on each instance, at once: never 5 on one code.
      for (const wrong of [4, 4, 2]) {
        code = await requestCode(app, 'race@alpha.test');
        const guesses = Array.from({ length: wrong }, (_, i) =>
          confirm(i % 2 === 0 ? app : second, 'race@alpha.test', wrongOf(code, i)),
        );
        for (const res of await Promise.all(guesses)) assert.equal(json(res).code, 'invalid_code');
      }
      assert.equal(json(await confirm(second, 'race@alpha.test', code)).code, 'invalid_code');
    } finally {
      await second.close();
    }
  });
});

describe('POST /v1/login/forgot-password', () => {
  it('mails at most 3 codes per user an hour; the 4th request still answers 202 and the last code stays good', async () => {
    const { app, admin } = await setup();
    await confirmedUser(app, admin, 'many@alpha.test');
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) codes.push(await requestCode(app, 'many@alpha.test'));
    const fourth = await app.inject({
      method: 'POST',
      url: '/v1/login/forgot-password',
      payload: { user: 'many@alpha.test' },
    });
    assert.equal(fourth.statusCode, 202);
    assert.equal(fourth.body, '');
    await app.services.users.stop();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(mailsOf('many@alpha.test', /reset code/).length, 3, 'no 4th mail');
    const outbox = await h.db.current.database.db.execute(
      sql`SELECT count(*)::int AS n FROM mail_outbox WHERE recipient = 'many@alpha.test'`,
    );
    assert.equal((outbox as unknown as { rows: Array<{ n: number }> }).rows[0]!.n, 0, 'nor one waiting');
    assert.equal((await confirm(app, 'many@alpha.test', codes[2]!)).statusCode, 204);
  });
});

describe('voiding pending credentials', () => {
  it("an ADMIN's reset voids the user's challenge sessions and reset code", async () => {
    const { app, admin } = await setup();
    const user = await confirmedUser(app, admin, 'reset@alpha.test');
    const code = await requestCode(app, 'reset@alpha.test');
    const secret = (await enableTotp(app, user.token, STRONG)).secret;
    const challenge = json(
      await app.inject({ method: 'POST', url: '/v1/login', payload: { user: 'reset@alpha.test', password: STRONG } }),
    ).challenge;
    assert.equal(challenge.name, 'SOFTWARE_TOKEN_MFA');
    const reset = await app.inject({
      method: 'POST',
      url: `/v1/users/${user.id}/reset-password`,
      headers: bearer(admin),
    });
    assert.equal(reset.statusCode, 200, reset.body);
    const answer = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'SOFTWARE_TOKEN_MFA', session: challenge.session, code: totpCode(secret) },
    });
    assert.equal(json(answer).code, 'invalid_challenge');
    assert.equal(json(await confirm(app, 'reset@alpha.test', code)).code, 'invalid_code');
  });

  it('a disable and a re-enable void the challenge sessions and reset code from before', async () => {
    const { app, admin } = await setup();
    const created = json(
      await app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: bearer(admin),
        payload: { email: 'off@alpha.test' },
      }),
    );
    const challenge = json(
      await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: 'off@alpha.test', password: created.temporary_password },
      }),
    ).challenge;
    assert.equal(challenge.name, 'NEW_PASSWORD_REQUIRED');
    const other = await confirmedUser(app, admin, 'off2@alpha.test');
    const code = await requestCode(app, 'off2@alpha.test');
    for (const id of [created.attributes.id, other.id]) {
      for (const enabled of [false, true]) {
        const res = await app.inject({
          method: 'PATCH',
          url: `/v1/users/${id}`,
          headers: bearer(admin),
          payload: { enabled },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    }
    const answer = await app.inject({
      method: 'POST',
      url: '/v1/login/challenge',
      payload: { name: 'NEW_PASSWORD_REQUIRED', session: challenge.session, new_password: STRONG },
    });
    assert.equal(json(answer).code, 'invalid_challenge');
    assert.equal(json(await confirm(app, 'off2@alpha.test', code)).code, 'invalid_code');
  });
});

describe('two-factor codes and resets', () => {
  it('a forgotten-password reset leaves TOTP on', async () => {
    const { app, admin } = await setup();
    const user = await confirmedUser(app, admin, 'keeps@alpha.test');
    await enableTotp(app, user.token, STRONG);
    const code = await requestCode(app, 'keeps@alpha.test');
    assert.equal((await confirm(app, 'keeps@alpha.test', code)).statusCode, 204);
    const login = json(
      await app.inject({ method: 'POST', url: '/v1/login', payload: { user: 'keeps@alpha.test', password: NEWER } }),
    );
    assert.equal(login.challenge?.name, 'SOFTWARE_TOKEN_MFA');
  });

  it("an ADMIN's reset of a TOTP user turns it off and, with a mail server, mails the password only", async () => {
    const { app, admin } = await setup();
    const user = await confirmedUser(app, admin, 'totp@alpha.test');
    await enableTotp(app, user.token, STRONG);
    const reset = await app.inject({
      method: 'POST',
      url: `/v1/users/${user.id}/reset-password`,
      headers: bearer(admin),
    });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.deepEqual(json(reset), { temporary_password: null, delivered_by: 'email' });
    const [mail] = await waitForMails('totp@alpha.test', /password was reset/, 1);
    const temporary = /\n([A-Za-z0-9_-]{20})\r?\n/.exec(mail!)?.[1];
    assert.ok(temporary, mail);
    const login = json(
      await app.inject({ method: 'POST', url: '/v1/login', payload: { user: 'totp@alpha.test', password: temporary } }),
    );
    assert.equal(login.challenge.name, 'NEW_PASSWORD_REQUIRED', 'TOTP is off');
    // A user without TOTP: the answer carries the password, and the user is told by mail too.
    const plain = await confirmedUser(app, admin, 'plain@alpha.test');
    const plainReset = json(
      await app.inject({ method: 'POST', url: `/v1/users/${plain.id}/reset-password`, headers: bearer(admin) }),
    );
    assert.equal(plainReset.delivered_by, 'response');
    assert.equal(typeof plainReset.temporary_password, 'string');
    const [notice] = await waitForMails('plain@alpha.test', /password was reset/, 1);
    assert.ok(notice?.includes(plainReset.temporary_password));
  });

  it('without a mail server the answer carries the password, TOTP or not', async () => {
    const { app, admin } = await setup(false);
    const user = await confirmedUser(app, admin, 'nomail@alpha.test');
    await enableTotp(app, user.token, STRONG);
    const reset = json(
      await app.inject({ method: 'POST', url: `/v1/users/${user.id}/reset-password`, headers: bearer(admin) }),
    );
    assert.equal(reset.delivered_by, 'response');
    const login = json(
      await app.inject({
        method: 'POST',
        url: '/v1/login',
        payload: { user: 'nomail@alpha.test', password: reset.temporary_password },
      }),
    );
    assert.equal(login.challenge.name, 'NEW_PASSWORD_REQUIRED');
  });
});
