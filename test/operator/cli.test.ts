/** The operator command line, run as a real process against a real database. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { count } from 'drizzle-orm';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, customers } from '../../src/db/schema.js';
import { DEMO_CUSTOMERS } from '../../src/features/operator/demo-data.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const run = promisify(execFile);
const BIN = path.resolve('bin/feegate.js');

let dir: string;
let pg: TestDatabase | undefined;
let env: NodeJS.ProcessEnv;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'feegate-cli-'));
  if (process.env.TEST_DATABASE_URL) {
    pg = await createTestDatabase();
    env = { ...process.env, DATABASE_URL: pg.url };
  } else {
    env = { ...process.env, DATABASE_URL: '', FEEGATE_DATA_DIR: path.join(dir, 'data') };
  }
});
after(async () => {
  await pg?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function feegate(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Reads the database the CLI wrote (after the CLI process has exited). */
async function withDb<T>(work: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const database = pg ? await openDatabase({ databaseUrl: pg.url }) : await openDatabase({ dataDir: env.FEEGATE_DATA_DIR! });
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
    const { stdout } = await run(process.execPath, ['dist/feegate.mjs', 'migrate'], { env, timeout: 60_000 });
    assert.match(stdout, /migrations applied/);
    const help = await run(process.execPath, ['dist/feegate.mjs', 'help'], { env, timeout: 60_000 }).catch((err) => err as { stdout: string });
    assert.match(help.stdout, /migrate\s+apply database migrations/);
  });

  it('migrate applies migrations and exits 0', async () => {
    const res = await feegate('migrate');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /migrations applied/);
  });

  it('import refuses an invalid file with exit 1, the JSON path, and nothing written', async () => {
    const file = path.join(dir, 'bad.json');
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
    const file = path.join(dir, 'garbage.json');
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

  it('keys issue refuses a merchant of another customer with exit 1', async () => {
    const res = await feegate('keys', 'issue', '--user', 'x@acme.test', '--customer', DEMO_CUSTOMERS.globex, '--merchant', 'd0000000-0000-4000-8000-000000000001');
    assert.equal(res.code, 1);
    assert.match(res.stderr, /merchant_not_found/);
  });

  it('answers an unknown command and bad configuration with exit 1 and a clear message', async () => {
    const unknown = await feegate('frobnicate');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    const bad = await run(process.execPath, [BIN, 'migrate'], { env: { ...env, PORT: 'eighty' } }).catch((e) => e);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /PORT must be a whole number/);
  });
});
