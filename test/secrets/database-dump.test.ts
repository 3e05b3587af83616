/**
 * Contract section 19, "Nothing in the database lets anyone act": after every
 * feature that keeps a secret has been used, a dump of every column of every
 * table holds none of them, nor the key ring, and no private key in it signs a
 * token the service takes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type JWK, SignJWT, decodeJwt, decodeProtectedHeader, importJWK } from 'jose';
import { sql } from 'drizzle-orm';
import { TEST_SECRET_KEYS } from '../../src/config.js';
import { queryRows } from '../../src/db/database.js';
import { createSigningKeysDal } from '../../src/features/auth/signing-keys-dal.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { testSealedValues } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { enableTotp, startTotp } from '../helpers/mfa.js';
import { closedPort, dumpDatabase, privateJwksIn } from './helpers.js';

const h = useTestApp();

/** A token with `claims` signed by `jwk` under `kid`, as a thief holding the key would make it. */
async function forge(jwk: Record<string, unknown>, kid: string, claims: Record<string, unknown>) {
  const key = await importJWK(jwk as JWK, 'EdDSA');
  return new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid }).sign(key);
}

describe('a database dump without the key ring', () => {
  it('holds no secret a feature was given or made, and no key that signs an accepted token', async () => {
    const app = await h.app({ smtpUrl: `smtp://127.0.0.1:${await closedPort()}` });
    const world = await seedWorld(app);
    const session = await loginAs(app, world.login);
    const admin = session.access_token;
    const secrets: Record<string, string> = {
      'refresh token': session.refresh_token,
      'ring key': TEST_SECRET_KEYS.split(':')[1]!,
      'ring key (hex)': Buffer.from(TEST_SECRET_KEYS.split(':')[1]!, 'base64').toString('hex'),
    };

    // A login user made by an ADMIN: its temporary password waits in the outbox (the mail server is down).
    const created = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(admin),
      payload: { email: 'new@alpha.test', role: 'MEMBER' },
    });
    assert.equal(created.statusCode, 201, created.body);
    if (typeof json(created).temporary_password === 'string')
      secrets['temporary password'] = json(created).temporary_password;

    // TOTP: active for the ADMIN (with its recovery codes), pending for the other customer's owner.
    const active = await enableTotp(app, admin, world.login.password);
    secrets['active TOTP secret'] = active.secret;
    active.recoveryCodes.forEach((code, i) => {
      secrets[`recovery code ${i}`] = code;
      secrets[`recovery code ${i} (bare)`] = code.replace('-', '');
    });
    const other = await loginAs(app, world.otherLogin);
    secrets['pending TOTP secret'] = await startTotp(app, other.access_token, world.otherLogin.password);
    secrets['other refresh token'] = other.refresh_token;

    // A webhook whose secret was rolled: both sign for a day.
    const hook = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: bearer(admin),
      payload: {
        notification_url: 'https://hooks.alpha.test/in',
        notification_type: ['WEBHOOK_TEST'],
        secret_key: 'Whsec-First-2026',
      },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    const rolled = await app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${json(hook).id}`,
      headers: bearer(admin),
      payload: { secret_key: 'Whsec-Second-2026' },
    });
    assert.equal(rolled.statusCode, 200, rolled.body);
    secrets['webhook secret'] = 'Whsec-First-2026';
    secrets['rolled webhook secret'] = 'Whsec-Second-2026';

    secrets['API key'] = (await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId })).api_key;

    // A forgotten password: its code waits in the outbox too; the ring opens it, so the test knows it.
    const forgot = await app.inject({
      method: 'POST',
      url: '/v1/login/forgot-password',
      payload: { user: world.otherLogin.user },
    });
    assert.equal(forgot.statusCode, 202);
    const sealed = testSealedValues();
    const mails = async () =>
      (
        await queryRows<{ id: string; subject: string; body: string }>(
          h.db.current.database.db,
          sql`SELECT id::text, subject, body FROM mail_outbox`,
        )
      ).map((m) => ({
        subject: sealed.open({ table: 'mail_outbox', column: 'subject', row: m.id }, m.subject) ?? '',
        body: sealed.open({ table: 'mail_outbox', column: 'body', row: m.id }, m.body) ?? '',
      }));
    await waitFor(async () => (await mails()).some((m) => /reset code/.test(m.subject)), 'the reset mail is queued');
    const resetMail = (await mails()).find((m) => /reset code/.test(m.subject))!;
    secrets['reset code'] = /\n(\d{6})\n/.exec(resetMail.body)![1]!;
    if (secrets['temporary password'])
      assert.ok(
        (await mails()).some((m) => m.body.includes(secrets['temporary password']!)),
        'the mail opens with the ring',
      );

    const dump = await dumpDatabase(h.db.current.database);
    const text = JSON.stringify(dump);
    assert.ok(text.includes('new@alpha.test'), 'the dump is of this database');
    for (const [name, secret] of Object.entries(secrets)) {
      const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.doesNotMatch(text, new RegExp(`(?<![0-9A-Za-z])${escaped}(?![0-9A-Za-z])`), `the dump holds the ${name}`);
    }

    // Every private key found in the dump signs tokens the service refuses; the real one, opened with the ring, would not.
    const claims = decodeJwt(admin);
    const kid = decodeProtectedHeader(admin).kid!;
    const found = privateJwksIn(dump.map((d) => d.row));
    for (const jwk of found)
      assert.equal(
        (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(await forge(jwk, kid, claims)) }))
          .statusCode,
        401,
      );
    const [signing] = await createSigningKeysDal(h.db.current.database.db, sealed).listVerifying(new Date(0));
    const real = await forge(signing!.openPrivateJwk() as Record<string, unknown>, kid, claims);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(real) })).statusCode,
      200,
      'the forgery would work with the key itself',
    );
  });
});
