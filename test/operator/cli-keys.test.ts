/** feegate demo and feegate keys (issue, list, revoke), run as a real process against a real database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { apiKeys } from '../../src/db/schema.js';
import { DEMO_CUSTOMERS, DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import { cliDatabaseAccess, runFeegate, useCliDatabase } from '../helpers/cli.js';

const cli = useCliDatabase('feegate-cli-keys-');
const feegate = (...args: string[]) => runFeegate(args, cli.env);
const { withDb, customerCount } = cliDatabaseAccess(cli);

describe('feegate demo and keys', () => {
  it('demo loads the demo data, and keys issue prints a working key once', async () => {
    assert.equal((await feegate('demo')).code, 0);
    assert.equal(await customerCount(), 2);
    const res = await feegate('keys', 'issue', '--user', 'ops-cli@acme.test', '--customer', DEMO_CUSTOMERS.acme);
    assert.equal(res.code, 0, res.stderr);
    const key = res.stdout.match(/fgk_[0-9A-Za-z]{38}/)?.[0];
    assert.ok(key, res.stdout);
    assert.equal(await withDb(async (d) => (await d.db.select({ n: count() }).from(apiKeys))[0]!.n), 1);
  });

  it('keys list shows every key of a customer, masked, and keys revoke deletes one', async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const issued = await feegate('keys', 'issue', '--user', 'ops-list@acme.test', '--customer', DEMO_CUSTOMERS.acme);
    const key = issued.stdout.match(/fgk_[0-9A-Za-z]{38}/)![0];
    const id = issued.stdout.match(/API key ([0-9a-f-]{36})/)![1]!;
    const listed = await feegate('keys', 'list', '--customer', DEMO_CUSTOMERS.acme);
    assert.equal(listed.code, 0, listed.stderr);
    const line = listed.stdout.split('\n').find((l) => l.startsWith(id));
    assert.ok(line, listed.stdout);
    assert.match(line, /\tENABLED\t/);
    assert.ok(line.includes(`fgk_****${key.slice(-4)}`));
    assert.ok(!listed.stdout.includes(key), 'never the full key');
    const revoked = await feegate('keys', 'revoke', id.toUpperCase());
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /revoked/);
    const after = await feegate('keys', 'list', '--customer', DEMO_CUSTOMERS.acme);
    assert.match(after.stdout.split('\n').find((l) => l.startsWith(id))!, /\tDELETED\t/);
    const unknown = await feegate('keys', 'revoke', 'f0000000-0000-4000-8000-000000000000');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /api_key_not_found/);
    const bad = await feegate('keys', 'list', '--customer', 'nope');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /"nope" is not a UUID/);
  });

  it("keys issue gives each customer its own user of an e-mail, even another customer's login e-mail", async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acmeLogin = DEMO_LOGINS.find((l) => l.user.includes('acme'))!.user;
    const res = await feegate('keys', 'issue', '--user', acmeLogin, '--customer', DEMO_CUSTOMERS.globex);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`for ${acmeLogin.replace('.', '\\.')} \\(CUSTOMER\\)`));
    const again = await feegate('keys', 'issue', '--user', 'shared-cli@both.test', '--customer', DEMO_CUSTOMERS.acme);
    const other = await feegate('keys', 'issue', '--user', 'shared-cli@both.test', '--customer', DEMO_CUSTOMERS.globex);
    assert.deepEqual([again.code, other.code], [0, 0], again.stderr + other.stderr);
  });

  it('keys issue refuses a merchant of another customer with exit 1', async () => {
    const res = await feegate(
      'keys',
      'issue',
      '--user',
      'x@acme.test',
      '--customer',
      DEMO_CUSTOMERS.globex,
      '--merchant',
      'd0000000-0000-4000-8000-000000000001',
    );
    assert.equal(res.code, 1);
    assert.match(res.stderr, /merchant_not_found/);
  });
});
