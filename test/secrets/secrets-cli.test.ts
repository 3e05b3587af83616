/**
 * Contract section 19, "The key ring": `feegate secrets generate-key | rotate |
 * check`, the ring's settings refused in one line naming the variable (never
 * its value), and the embedded database's own ring made at the first start.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { TEST_SECRET_KEYS, testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { parseKeyRing } from '../../src/lib/key-ring.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { runFeegate, useCliDatabase } from '../helpers/cli.js';
import { startTotp } from '../helpers/mfa.js';

const cli = useCliDatabase('feegate-secrets-');
/** A second key: `rotate` moves every value under it. */
const fresh = `fresh:${Buffer.alloc(32, 9).toString('base64')}`;
const feegate = (args: string[], env: NodeJS.ProcessEnv = {}) => runFeegate(args, { ...cli.env, ...env });

function assertOneLine(res: { code: number; stdout: string; stderr: string }, expected: RegExp) {
  assert.equal(res.code, 1, res.stdout + res.stderr);
  const lines = res.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, res.stderr);
  assert.match(lines[0]!, expected);
  assert.doesNotMatch(res.stderr, /\n\s+at /);
}

describe('feegate secrets', () => {
  it('generate-key prints a new entry the ring takes; an argument is a usage line', async () => {
    const [a, b] = [await feegate(['secrets', 'generate-key']), await feegate(['secrets', 'generate-key'])];
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout.trim(), /^k\d{8}[0-9a-f]{6}:[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(a.stdout, b.stdout);
    assert.deepEqual(parseKeyRing(a.stdout).kids, [a.stdout.split(':')[0]]);
    assertOneLine(await feegate(['secrets', 'generate-key', 'now']), /usage: feegate secrets generate-key/);
    assertOneLine(await feegate(['secrets']), /unknown command "secrets"/);
    const help = await feegate(['help']);
    for (const name of ['generate-key', 'rotate', 'check']) assert.match(help.stdout, new RegExp(`secrets ${name}`));
  });

  it('rotate re-encrypts every value under the first key (again: nothing left), and check counts them by key id', async () => {
    assert.equal((await feegate(['migrate'])).code, 0);
    // Values of every kind, written by an instance under the tests' ring.
    const database = cli.pg
      ? await openDatabase({ databaseUrl: cli.pg.url })
      : await openDatabase({ dataDir: cli.env.FEEGATE_DATA_DIR! });
    const app = await buildApp({ config: testConfig(), database, ownsDatabase: true });
    const world = await seedWorld(app);
    await startTotp(app, (await loginAs(app, world.login)).access_token, world.login.password);
    await app.close();

    const before = await feegate(['secrets', 'check']);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /^test\t[1-9]\d*\tpresent$/m);
    const both = { FEEGATE_SECRET_KEYS: `${fresh},${TEST_SECRET_KEYS}` };
    const rotated = await feegate(['secrets', 'rotate'], both);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /^users\.totp_secret: 1 re-encrypted$/m);
    assert.match(rotated.stdout, /^signing_keys\.private_jwk: 1 re-encrypted$/m);
    assert.match(rotated.stdout, /^digest_keys\.key: 1 re-encrypted$/m);
    const again = await feegate(['secrets', 'rotate'], both);
    assert.doesNotMatch(again.stdout, /: [1-9]\d* re-encrypted/);

    const onlyFresh = await feegate(['secrets', 'check'], { FEEGATE_SECRET_KEYS: fresh });
    assert.equal(onlyFresh.code, 0, onlyFresh.stdout);
    assert.match(onlyFresh.stdout, /^fresh\t[1-9]\d*\tpresent$/m);
    const onlyOld = await feegate(['secrets', 'check'], { FEEGATE_SECRET_KEYS: TEST_SECRET_KEYS });
    assert.equal(onlyOld.code, 1);
    assert.match(onlyOld.stdout, /^fresh\t[1-9]\d*\tMISSING$/m);
    assert.match(onlyOld.stdout, /the key ring lacks fresh/);
    // Any other command refuses a database whose values it cannot open.
    assertOneLine(await feegate(['migrate']), /stored secrets need key id "fresh"/);
    for (const res of [rotated, again, onlyFresh, onlyOld])
      assert.ok(!(res.stdout + res.stderr).includes(fresh.split(':')[1]!), 'the ring is never printed');
  });

  it('refuses a bad ring in one line naming the variable, never the value', async () => {
    const secret = 'c2hvcnQ=';
    const bad = await feegate(['migrate'], { FEEGATE_SECRET_KEYS: `test:${secret}` });
    assertOneLine(
      bad,
      /configuration error: FEEGATE_SECRET_KEYS: entry 1 \(kid test\) must hold the base64 of exactly 32 bytes/,
    );
    assert.ok(!bad.stderr.includes(secret));
    assertOneLine(
      await feegate(['migrate'], { FEEGATE_SECRET_KEYS: 'no colon here' }),
      /FEEGATE_SECRET_KEYS: entry 1 must be <kid>:<base64 key>/,
    );
    assertOneLine(
      await feegate(['migrate'], { FEEGATE_SECRET_KEYS: `${TEST_SECRET_KEYS},${TEST_SECRET_KEYS}` }),
      /FEEGATE_SECRET_KEYS: kid test appears twice/,
    );
    assertOneLine(
      await feegate(['migrate'], { FEEGATE_SECRET_KEYS_FILE: '/nonexistent/ring' }),
      /FEEGATE_SECRET_KEYS_FILE: cannot read \/nonexistent\/ring \(ENOENT\)/,
    );
    assertOneLine(
      await feegate(['migrate'], { FEEGATE_SECRET_KEYS_FILE: path.join(cli.dir, 'x') }),
      /FEEGATE_SECRET_KEYS and FEEGATE_SECRET_KEYS_FILE are both set|FEEGATE_SECRET_KEYS_FILE: cannot read/,
    );
    // PostgreSQL without a ring: refused before connecting, naming both variables and the command.
    assertOneLine(
      await feegate(['migrate'], { DATABASE_URL: 'postgres://feegate@127.0.0.1:1/none', FEEGATE_SECRET_KEYS: '' }),
      /no key ring: set FEEGATE_SECRET_KEYS or FEEGATE_SECRET_KEYS_FILE \(feegate secrets generate-key prints an entry\)/,
    );
  });

  it('takes the ring from FEEGATE_SECRET_KEYS_FILE, and refuses it beside FEEGATE_SECRET_KEYS', async () => {
    const { writeFile } = await import('node:fs/promises');
    const file = path.join(cli.dir, 'ring');
    // The values are under `fresh` since the rotation above.
    await writeFile(file, `${fresh}\n${TEST_SECRET_KEYS}\n`);
    assert.equal(
      (await feegate(['secrets', 'check'], { FEEGATE_SECRET_KEYS: '', FEEGATE_SECRET_KEYS_FILE: file })).code,
      0,
    );
    assertOneLine(
      await feegate(['secrets', 'check'], { FEEGATE_SECRET_KEYS_FILE: file }),
      /FEEGATE_SECRET_KEYS and FEEGATE_SECRET_KEYS_FILE are both set: set one of them/,
    );
  });

  it('makes the embedded database its own ring at the first start, readable by its owner only, and keeps it', async (t) => {
    if (cli.pg) return t.skip('the embedded database only');
    const dataDir = path.join(cli.dir, 'own-ring');
    const env = { FEEGATE_SECRET_KEYS: '', FEEGATE_DATA_DIR: dataDir };
    assert.equal((await feegate(['migrate'], env)).code, 0);
    const file = path.join(dataDir, 'secret-keys');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const ring = readFileSync(file, 'utf8');
    const check = await feegate(['secrets', 'check'], env);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, new RegExp(`^${ring.split(':')[0]}\\t1\\tpresent$`, 'm'));
    assert.equal(readFileSync(file, 'utf8'), ring, 'the second start reads the same ring');
  });
});
