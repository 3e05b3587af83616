/** Access tokens are JWTs a third party can read and verify (docs/access-tokens.md). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type JWK, SignJWT, createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { buildApp } from '../../src/app.js';
import { TEST_SECRET_KEYS, testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { signingKeys } from '../../src/db/schema.js';
import { newSigningKey } from '../../src/features/auth/access-tokens.js';
import { createSigningKeysDal } from '../../src/features/auth/signing-keys-dal.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { testSealedValues } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

async function me(app: FastifyInstance, token: string) {
  return app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
}

async function jwks(app: FastifyInstance) {
  return json<{ keys: JWK[] }>(await app.inject({ method: 'GET', url: '/.well-known/jwks.json' }));
}

/** The service's own signing key, read from the database: forgeries signed with it test the claim checks. */
async function serviceSigningKey() {
  const [row] = await createSigningKeysDal(h.db.current.database.db, testSealedValues()).listVerifying(new Date(0));
  return { kid: row!.kid, key: await importJWK(row!.openPrivateJwk()!, 'EdDSA') };
}

/** A second, independent instance: its own connection pool and LISTEN connection on PostgreSQL. */
async function secondInstance(): Promise<FastifyInstance> {
  const url = h.db.current.url;
  const database = url ? await openDatabase({ databaseUrl: url }) : h.db.current.database;
  const app = await buildApp({ config: testConfig(), database, ownsDatabase: url !== undefined });
  await app.ready();
  return app;
}

function assert401(res: Awaited<ReturnType<typeof me>>) {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(json(res).code, 'invalid_token');
}

describe('access token: happy', () => {
  it('is a JWT whose exp is iat + expires_in, with the contract claims and no e-mail', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const header = decodeProtectedHeader(token.access_token);
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'EdDSA');
    assert.equal(typeof header.kid, 'string');
    const claims = decodeJwt(token.access_token);
    assert.equal(claims.exp, claims.iat! + token.expires_in);
    assert.equal(claims.iss, 'feegate');
    const self = json(await me(app, token.access_token));
    assert.equal(claims.sub, self.id);
    assert.equal(claims.user_type, 'CUSTOMER');
    assert.equal(claims.customer_id, world.customerId);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
    assert.ok(!token.access_token.includes(Buffer.from(world.login.user).toString('base64url')));
    assert.ok(!JSON.stringify(claims).includes(world.login.user), 'no e-mail in the claims');
    const again = decodeJwt((await loginAs(app, world.login)).access_token);
    assert.notEqual(again.jti, claims.jti, 'jti is unique');
  });

  it('verifies against the JWKS, which carries no private material and may be cached', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    const res = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['cache-control']), /public, max-age=\d+/);
    const set = json<{ keys: JWK[] }>(res);
    assert.equal(set.keys.length, 1);
    for (const key of set.keys) assert.equal(key.d, undefined, 'no private part');
    const { payload } = await jwtVerify(token.access_token, createLocalJWKSet(set), {
      issuer: 'feegate',
      typ: 'at+jwt',
    });
    assert.equal(payload.customer_id, world.customerId);
  });

  it('takes iss from FEEGATE_ISSUER', async () => {
    const app = await h.app({ issuer: 'https://auth.feegate.example' });
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    assert.equal(decodeJwt(token.access_token).iss, 'https://auth.feegate.example');
    assert.equal((await me(app, token.access_token)).statusCode, 200);
  });

  it('survives a restart: a new app on the same database accepts it, with the same key', async () => {
    const first = await secondInstance();
    let token: string;
    try {
      const world = await seedWorld(first);
      token = (await loginAs(first, world.login)).access_token;
    } finally {
      await first.close();
    }
    const restarted = await h.app();
    assert.equal((await me(restarted, token)).statusCode, 200);
    assert.deepEqual(
      (await jwks(restarted)).keys.map((k) => k.kid),
      [decodeProtectedHeader(token).kid],
    );
  });

  it('instances starting at once make exactly one signing key', async () => {
    const apps = await Promise.all([secondInstance(), secondInstance(), secondInstance()]);
    try {
      const kids = await Promise.all(apps.map(async (app) => (await jwks(app)).keys.map((k) => k.kid)));
      assert.equal(kids[0]!.length, 1);
      assert.deepEqual(kids[1], kids[0]);
      assert.deepEqual(kids[2], kids[0]);
      assert.equal((await h.db.current.database.db.select().from(signingKeys)).length, 1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});

describe('access token: refused forgeries (401 invalid_token)', () => {
  it('refuses a changed claim, alg none, HMAC, a foreign key, an unknown kid, a wrong iss and an expired token', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const good = (await loginAs(app, world.login)).access_token;
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = decodeJwt(good);
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

    // A changed claim under the original signature.
    assert401(await me(app, `${header}.${b64({ ...claims, customer_id: world.otherCustomerId })}.${signature}`));
    assert401(await me(app, `${header}.${b64({ ...claims, exp: claims.exp! + 3600 })}.${signature}`));
    assert401(await me(app, `${header}.${payload}.${signature.slice(0, -4)}AAAA`));
    // alg none.
    assert401(
      await me(app, `${b64({ alg: 'none', typ: 'at+jwt', kid: decodeProtectedHeader(good).kid })}.${payload}.`),
    );
    // HMAC keyed with the public key (the classic algorithm confusion).
    const publicX = (await jwks(app)).keys[0]!.x!;
    const hmac = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: decodeProtectedHeader(good).kid! })
      .sign(new TextEncoder().encode(publicX));
    assert401(await me(app, hmac));
    // A key the service never made, with its own kid and with the service's kid.
    const foreign = await newSigningKey();
    const foreignKey = await importJWK(foreign.privateJwk as JWK, 'EdDSA');
    for (const kid of [foreign.kid, decodeProtectedHeader(good).kid!]) {
      assert401(
        await me(
          app,
          await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid }).sign(foreignKey),
        ),
      );
    }
    // The service's own key, but a wrong iss, a wrong typ, or past exp.
    const own = await serviceSigningKey();
    const signOwn = (body: object, typ = 'at+jwt') =>
      new SignJWT({ ...body }).setProtectedHeader({ alg: 'EdDSA', typ, kid: own.kid }).sign(own.key);
    assert.equal((await me(app, await signOwn(claims))).statusCode, 200, 'the forger is right about everything else');
    assert401(await me(app, await signOwn({ ...claims, iss: 'someone-else' })));
    assert401(await me(app, await signOwn(claims, 'JWT')));
    const past = Math.floor(Date.now() / 1000) - 7200;
    assert401(await me(app, await signOwn({ ...claims, iat: past, exp: past + 3600 })));
    const { sid: _sid, ...withoutSid } = claims;
    assert401(await me(app, await signOwn(withoutSid)));
    // And the real token still works: nothing above changed any state.
    assert.equal((await me(app, good)).statusCode, 200);
  });
});

describe('access token: revocation across instances', () => {
  /** Polls for up to a second: pushed revocations arrive in milliseconds. */
  const refusedBy = (app: FastifyInstance, token: string) =>
    waitFor(
      async () => (await me(app, token)).statusCode === 401,
      'the other instance refused the token within a second',
      { timeoutMs: 1000 },
    );

  it('logout on one instance refuses the token on another within a second', async () => {
    const app = await h.app();
    const second = await secondInstance();
    try {
      const world = await seedWorld(app);
      const token = await loginAs(app, world.login);
      assert.equal((await me(second, token.access_token)).statusCode, 200);
      const out = await app.inject({ method: 'POST', url: '/v1/logout', headers: bearer(token.access_token) });
      assert.equal(out.statusCode, 204);
      assert401(await me(app, token.access_token));
      await refusedBy(second, token.access_token);
    } finally {
      await second.close();
    }
  });

  it('refresh-token reuse on one instance refuses the newest access token on another', async () => {
    const app = await h.app();
    const second = await secondInstance();
    try {
      const world = await seedWorld(app);
      const first = await loginAs(app, world.login);
      const refresh = (refreshToken: string) =>
        app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: refreshToken } });
      const rotated = json(await refresh(first.refresh_token)).token;
      assert.equal((await me(second, rotated.access_token)).statusCode, 200);
      assert.equal((await refresh(first.refresh_token)).statusCode, 401);
      await refusedBy(second, rotated.access_token);
    } finally {
      await second.close();
    }
  });

  it('an instance that starts after a logout refuses the token too', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const token = await loginAs(app, world.login);
    await app.inject({ method: 'POST', url: '/v1/logout', headers: bearer(token.access_token) });
    const later = await secondInstance();
    try {
      assert401(await me(later, token.access_token));
    } finally {
      await later.close();
    }
  });
});

describe('signing-keys rotate', () => {
  it('signs new tokens with the new kid, keeps old tokens valid everywhere, and publishes both keys', async () => {
    const app = await h.app();
    const second = await secondInstance();
    try {
      const world = await seedWorld(app);
      const old = (await loginAs(app, world.login)).access_token;
      const oldKid = decodeProtectedHeader(old).kid;
      const newKid = await second.services.auth.rotateSigningKey();
      assert.notEqual(newKid, oldKid);
      // The first instance hears of the rotation and signs with the new key.
      await waitFor(
        async () => decodeProtectedHeader((await loginAs(app, world.login)).access_token).kid === newKid,
        'the rotation reached the other instance',
        { timeoutMs: 1000 },
      );
      for (const instance of [app, second]) {
        assert.equal((await me(instance, old)).statusCode, 200, 'the old token still verifies');
        assert.deepEqual((await jwks(instance)).keys.map((k) => k.kid).sort(), [oldKid, newKid].sort());
      }
      const fresh = (await loginAs(second, world.login)).access_token;
      assert.equal(decodeProtectedHeader(fresh).kid, newKid);
      await jwtVerify(fresh, createLocalJWKSet(await jwks(app)), { issuer: 'feegate' });
    } finally {
      await second.close();
    }
  });

  it('drops the old key from the JWKS once its tokens have expired', async () => {
    const app = await h.app({ accessTokenTtlSeconds: 1 });
    const world = await seedWorld(app);
    const old = (await loginAs(app, world.login)).access_token;
    const newKid = await app.services.auth.rotateSigningKey();
    assert.equal((await jwks(app)).keys.length, 2);
    await waitFor(async () => (await jwks(app)).keys.length === 1, 'the old key left the JWKS', {
      timeoutMs: 3000,
      intervalMs: 100,
    });
    assert.deepEqual(
      (await jwks(app)).keys.map((k) => k.kid),
      [newKid],
    );
    assert401(await me(app, old));
  });

  it('is a command: feegate signing-keys rotate', async (t) => {
    const url = h.db.current.url;
    if (!url) return t.skip('the command line needs a database another process can open (PostgreSQL)');
    const app = await h.app();
    const before = (await jwks(app)).keys.map((k) => k.kid);
    const { run } = await import('../../src/cli.js');
    const saved = { DATABASE_URL: process.env.DATABASE_URL, FEEGATE_SECRET_KEYS: process.env.FEEGATE_SECRET_KEYS };
    Object.assign(process.env, { DATABASE_URL: url, FEEGATE_SECRET_KEYS: TEST_SECRET_KEYS });
    try {
      assert.equal(await run(['signing-keys', 'rotate']), 0);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    await waitFor(async () => (await jwks(app)).keys.length === 2, 'the running instance picked up the rotation', {
      timeoutMs: 1000,
    });
    const world = await seedWorld(app);
    const kid = decodeProtectedHeader((await loginAs(app, world.login)).access_token).kid;
    assert.ok(!before.includes(kid!), 'new tokens are signed with the new key');
  });
});
