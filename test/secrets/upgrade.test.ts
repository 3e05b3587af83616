/**
 * Contract section 19, "Upgrading loses nothing": values stored in plain text
 * (as the code before migration 0015 stored them) are encrypted at the first
 * start with a ring and work as before; a value that does not open is logged
 * by table and row and read as absent; a value under a key the ring lacks
 * stops the start, naming the key id.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { buildApp, loggerOptions } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { queryRows } from '../../src/db/database.js';
import { createSigningKeysDal } from '../../src/features/auth/signing-keys-dal.js';
import { recoveryCodeHash, totpCode } from '../../src/features/credentials/totp.js';
import { parseKeyRing } from '../../src/lib/key-ring.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import { bearer, json } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { testSealedValues } from '../helpers/secrets.js';
import { deliveringTo, type Receiver, SECRET, startReceiver, subscribe } from '../helpers/webhooks.js';
import { enableTotp, startTotp } from '../helpers/mfa.js';

const db = useTestDatabase();
const opened: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close();
});

/** An app on the file's database, its log lines in `lines`. */
async function start(overrides: Partial<Config> = {}) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = testConfig({ logLevel: 'warn', ...overrides });
  const app = await buildApp({
    config,
    database: db.current.database,
    loggerInstance: pino(loggerOptions(config) as object, sink),
  });
  opened.push(app);
  return { app, lines };
}

const run = (query: ReturnType<typeof sql>) => db.current.database.db.execute(query);
const rows = <T>(query: ReturnType<typeof sql>) => queryRows<T>(db.current.database.db, query);

async function challenge(app: FastifyInstance, login: { user: string; password: string }, code: string) {
  const first = json(await app.inject({ method: 'POST', url: '/v1/login', payload: login }));
  assert.equal(first.challenge?.name, 'SOFTWARE_TOKEN_MFA', JSON.stringify(first));
  return app.inject({
    method: 'POST',
    url: '/v1/login/challenge',
    payload: { name: 'SOFTWARE_TOKEN_MFA', session: first.challenge.session, code },
  });
}

describe('upgrading plain values', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('encrypts them at the first start with a ring, and the same codes, signatures and logins work', async () => {
    receiver = await startReceiver();
    const { app } = await start(deliveringTo(receiver));
    const world = await seedWorld(app);
    const admin = (await loginAs(app, world.login)).access_token;
    const { secret: totp, recoveryCodes: recovery } = await enableTotp(app, admin, world.login.password);
    const hook = await subscribe(app, { token: admin }, receiver.url, ['WEBHOOK_TEST']);
    const [owner] = await rows<{ id: string }>(sql`SELECT id::text FROM users WHERE email = ${world.login.user}`);
    const [other] = await rows<{ id: string }>(sql`SELECT id::text FROM users WHERE email = ${world.otherLogin.user}`);
    const [signing] = await createSigningKeysDal(db.current.database.db, testSealedValues()).listVerifying(new Date(0));
    await app.close();

    // As the code before migration 0015 stored them.
    await run(sql`UPDATE users SET totp_secret = ${totp} WHERE id = ${owner!.id}`);
    await run(sql`DELETE FROM user_recovery_codes WHERE user_id = ${owner!.id}`);
    for (const code of recovery)
      await run(
        sql`INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (${owner!.id}, ${recoveryCodeHash(code)})`,
      );
    await run(sql`INSERT INTO password_reset_codes (user_id, code_hash, expires_at)
      VALUES (${other!.id}, ${sha256Hex(`${other!.id}:123987`)}, now() + interval '15 minutes')`);
    await run(sql`UPDATE webhook_subscriptions SET secret = ${SECRET} WHERE id = ${hook}`);
    await run(
      sql`UPDATE signing_keys SET private_jwk = ${JSON.stringify(signing!.openPrivateJwk())} WHERE kid = ${signing!.kid}`,
    );
    await run(
      sql`INSERT INTO mail_outbox (recipient, subject, body) VALUES ('x@alpha.test', 'Plain subject', 'Plain body 4711')`,
    );

    const { app: upgraded } = await start(deliveringTo(receiver));
    const stored = JSON.stringify(
      await rows(sql`SELECT (SELECT totp_secret FROM users WHERE id = ${owner!.id}) AS totp,
        (SELECT array_agg(code_hash) FROM user_recovery_codes) AS recovery,
        (SELECT code_hash FROM password_reset_codes WHERE user_id = ${other!.id}) AS reset,
        (SELECT secret FROM webhook_subscriptions WHERE id = ${hook}) AS hook,
        (SELECT array_agg(private_jwk) FROM signing_keys) AS signing,
        (SELECT array_agg(subject || body) FROM mail_outbox) AS mail`),
    );
    for (const plain of [
      totp,
      SECRET,
      '"d":',
      'Plain body',
      recoveryCodeHash(recovery[0]!),
      sha256Hex(`${other!.id}:123987`),
    ])
      assert.ok(!stored.includes(plain), `${plain} is still stored as it was`);
    assert.match(stored, /"totp":"enc:v1:test:/);
    assert.match(stored, /"reset":"hmac:v1:/);

    // The same TOTP secret (a later step than the one spent at enrolment), the same recovery codes, the same reset code.
    const next = await challenge(upgraded, world.login, totpCode(totp, Date.now() + 30_000));
    assert.equal(next.statusCode, 200, next.body);
    const token = json(next).token.access_token;
    assert.equal(
      (await upgraded.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) })).statusCode,
      200,
    );
    assert.equal((await challenge(upgraded, world.login, recovery[0]!)).statusCode, 200);
    assert.equal(
      (await challenge(upgraded, world.login, recovery[0]!)).statusCode,
      401,
      'a recovery code is spent once',
    );
    const reset = await upgraded.inject({
      method: 'POST',
      url: '/v1/login/confirm-forgot-password',
      payload: { user: world.otherLogin.user, code: '123987', new_password: 'a quiet violet harbour at noon' },
    });
    assert.equal(reset.statusCode, 204, reset.body);
    // The same webhook signature.
    const test = await upgraded.inject({ method: 'POST', url: `/v1/webhooks/${hook}/test`, headers: bearer(token) });
    assert.equal(test.statusCode < 300, true, test.body);
    const [got] = await receiver.waitFor(1);
    new Webhook(Buffer.from(SECRET, 'utf8'), { format: 'raw' }).verify(got!.body, got!.headers as never);
  });
});

describe('values that do not open', () => {
  it('are logged by table, column and row, never by content, and read as absent: no 500', async () => {
    const { app, lines } = await start();
    const world = await seedWorld(app);
    const admin = (await loginAs(app, world.login)).access_token;
    const other = (await loginAs(app, world.otherLogin)).access_token;
    const pending = await startTotp(app, admin, world.login.password);
    await startTotp(app, other, world.otherLogin.password);
    // The admin's pending secret copied into the other user's row: bound to its own row, it does not open there.
    const [owner] = await rows<{ id: string; secret: string }>(
      sql`SELECT id::text, totp_secret AS secret FROM users WHERE email = ${world.login.user}`,
    );
    const [moved] = await rows<{ id: string }>(sql`UPDATE users SET totp_secret = ${owner!.secret}
      WHERE email = ${world.otherLogin.user} RETURNING id::text`);
    const verify = await app.inject({
      method: 'POST',
      url: '/v1/users/me/mfa/totp/verify',
      headers: bearer(other),
      payload: { code: totpCode(pending) },
    });
    assert.ok(verify.statusCode >= 400 && verify.statusCode < 500, verify.body);
    assert.equal(json(verify).code, 'invalid_code');
    const logged = lines.map((line) => JSON.parse(line)).find((l) => l.table === 'users' && l.row === moved!.id);
    assert.ok(logged, lines.join(''));
    assert.equal(logged.column, 'totp_secret');
    assert.ok(!lines.join('').includes(pending) && !lines.join('').includes(owner!.secret));

    // A signing key whose private part was tampered with (one character of its tag changed, never to itself:
    // writing 'A' over an 'A' changed nothing one run in 64): the next start signs with a new key.
    await run(sql`UPDATE signing_keys SET private_jwk = overlay(private_jwk
      placing (CASE substr(private_jwk, length(private_jwk) - 3, 1) WHEN 'A' THEN 'B' ELSE 'A' END)
      from length(private_jwk) - 3 for 1) WHERE retired_at IS NULL`);
    const [{ kid }] = (await rows<{ kid: string }>(sql`SELECT kid FROM signing_keys WHERE retired_at IS NULL`)) as [
      { kid: string },
    ];
    const restarted = await start();
    assert.equal((await loginAs(restarted.app, world.otherLogin)).access_token.length > 0, true);
    assert.ok(restarted.lines.some((line) => line.includes('"signing_keys"') && line.includes(kid)));
  });

  it('stop the start when they need a key id the ring lacks, naming it', async () => {
    const { app } = await start();
    const world = await seedWorld(app);
    await startTotp(app, (await loginAs(app, world.login)).access_token, world.login.password);
    await app.close();
    const elsewhere = parseKeyRing(`gone:${Buffer.alloc(32, 7).toString('base64')}`);
    await run(
      sql`UPDATE users SET totp_secret = ${elsewhere.encrypt('JBSWY3DPEHPK3PXP', 'x')} WHERE email = ${world.login.user}`,
    );
    await assert.rejects(start(), /stored secrets need key id "gone" \(1 value\(s\)\), which the key ring lacks/);
  });
});
