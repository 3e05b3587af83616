/** The operator command line, run as a real process against a real database. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { count } from 'drizzle-orm';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, customers } from '../../src/db/schema.js';
import { DEMO_CUSTOMERS } from '../../src/features/operator/demo-data.js';
import { runFeegate, useCliDatabase } from '../helpers/cli.js';

const run = promisify(execFile);

const cli = useCliDatabase('feegate-cli-');
const feegate = (...args: string[]) => runFeegate(args, cli.env);

/** Reads the database the CLI wrote (after the CLI process has exited). */
async function withDb<T>(work: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const database = cli.pg ? await openDatabase({ databaseUrl: cli.pg.url }) : await openDatabase({ dataDir: cli.env.FEEGATE_DATA_DIR! });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

const customerCount = () => withDb(async (d) => (await d.db.select({ n: count() }).from(customers))[0]!.n);

describe('feegate command line', () => {
  it('runs from the bundle npm start builds, which finds the migrations from dist/', async () => {
    await run(process.execPath, ['scripts/build.mjs'], { timeout: 60_000 });
    const { stdout } = await run(process.execPath, ['dist/feegate.mjs', 'migrate'], { env: cli.env, timeout: 60_000 });
    assert.match(stdout, /migrations applied/);
    const help = await run(process.execPath, ['dist/feegate.mjs', 'help'], { env: cli.env, timeout: 60_000 }).catch((err) => err as { stdout: string });
    assert.match(help.stdout, /migrate\s+apply database migrations/);
  });

  it('migrate applies migrations and exits 0', async () => {
    const res = await feegate('migrate');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /migrations applied/);
  });

  it('import refuses an invalid file with exit 1, the JSON path, and nothing written', async () => {
    const file = path.join(cli.dir, 'bad.json');
    await writeFile(file, JSON.stringify({
      customers: [{ id: 'c1000000-0000-4000-8000-000000000001', name: 'Good' }],
      merchants: [{ id: 'd1000000-0000-4000-8000-000000000001', customer_id: 'not-a-uuid', name: 'Bad' }],
    }));
    const res = await feegate('import', file);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /\$\.merchants\[0\]\.customer_id/);
    assert.match(res.stderr, /nothing written/);
    assert.equal(await customerCount(), 0);
  });

  it('import refuses a file that is not JSON with exit 1', async () => {
    const file = path.join(cli.dir, 'garbage.json');
    await writeFile(file, '{ not json');
    const res = await feegate('import', file);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /cannot read/);
  });

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

  it('keys issue refuses a merchant of another customer with exit 1', async () => {
    const res = await feegate('keys', 'issue', '--user', 'x@acme.test', '--customer', DEMO_CUSTOMERS.globex, '--merchant', 'd0000000-0000-4000-8000-000000000001');
    assert.equal(res.code, 1);
    assert.match(res.stderr, /merchant_not_found/);
  });

  it('answers an unknown command and bad configuration with exit 1 and a clear message', async () => {
    const unknown = await feegate('frobnicate');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    const bad = await runFeegate(['migrate'], { ...cli.env, PORT: 'eighty' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /PORT must be a whole number/);
  });
});
