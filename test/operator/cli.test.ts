/** The operator command line, run as a real process against a real database: how it starts, its errors, and feegate import. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { count, eq } from 'drizzle-orm';
import { customers, merchants as merchantsTable, users } from '../../src/db/schema.js';
import { cliDatabaseAccess, FEEGATE_BIN, runFeegate, useCliDatabase } from '../helpers/cli.js';

const run = promisify(execFile);

const cli = useCliDatabase('feegate-cli-');
const feegate = (...args: string[]) => runFeegate(args, cli.env);
const { withDb, customerCount } = cliDatabaseAccess(cli);

describe('feegate command line', () => {
  it('runs from the bundle npm start builds, which finds the migrations from dist/', async () => {
    await run(process.execPath, ['scripts/build.mjs'], { timeout: 60_000 });
    const { stdout } = await run(process.execPath, ['dist/feegate.mjs', 'migrate'], { env: cli.env, timeout: 60_000 });
    assert.match(stdout, /migrations applied/);
    const help = await run(process.execPath, ['dist/feegate.mjs', 'help'], { env: cli.env, timeout: 60_000 }).catch(
      (err) => err as { stdout: string },
    );
    assert.match(help.stdout, /migrate\s+apply database migrations/);
  });

  it('migrate applies migrations and exits 0, run as npm run feegate runs it (bin/feegate.js)', async () => {
    const res = await runFeegate(['migrate'], cli.env, FEEGATE_BIN);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /migrations applied/);
  });

  it('import refuses an invalid file with exit 1, the JSON path, and nothing written', async () => {
    const file = path.join(cli.dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        customers: [{ id: 'c1000000-0000-4000-8000-000000000001', name: 'Good' }],
        merchants: [{ id: 'd1000000-0000-4000-8000-000000000001', customer_id: 'not-a-uuid', name: 'Bad' }],
      }),
    );
    const res = await feegate('import', file);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /\$\.merchants\[0\]\.customer_id/);
    assert.match(res.stderr, /nothing written/);
    assert.equal(await customerCount(), 0);
  });

  it("import refuses what the API refuses, in the API's words, naming the JSON path, and writes nothing", async () => {
    const customer = { id: 'c2000000-0000-4000-8000-000000000001', name: 'Acme' };
    const file = path.join(cli.dir, 'refused.json');
    for (const [doc, expected] of [
      [
        { customers: [{ ...customer, name: 'Acme\u0000' }] },
        '$.customers[0].name: must not contain U+0000 or an unpaired UTF-16 surrogate',
      ],
      [
        { customers: [customer], users: [{ email: 'ops..x@acme.test', type: 'CUSTOMER', customer_id: customer.id }] },
        '$.users[0].email: must be an e-mail address such as name@example.com (a domain with a dot)',
      ],
    ] as const) {
      await writeFile(file, JSON.stringify(doc));
      const res = await feegate('import', file);
      assert.equal(res.code, 1);
      assert.equal(res.stderr, `feegate: import refused, nothing written: ${expected}\n`);
      assert.equal(await customerCount(), 0);
    }
  });

  it('import refuses a file that is not JSON with exit 1', async () => {
    const file = path.join(cli.dir, 'garbage.json');
    // A wrong file named (a secret one): none of its text is printed.
    await writeFile(file, 'root:x:0:0:root:/root:/bin/bash');
    const res = await feegate('import', file);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /cannot read .* as JSON/);
    assert.doesNotMatch(res.stderr + res.stdout, /root:x/);
  });

  it('answers an unknown command and bad configuration with exit 1 and a clear message', async () => {
    const unknown = await feegate('frobnicate');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    const bad = await runFeegate(['migrate'], { ...cli.env, PORT: 'eighty' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /PORT must be a whole number/);
  });

  it('import takes 50,000 merchants in one transaction and prints one line', async () => {
    const customer = 'c5000000-0000-4000-8000-000000000001';
    const merchants = Array.from({ length: 50_000 }, (_, i) => ({
      id: `d5${String(i).padStart(6, '0')}-0000-4000-8000-000000000000`,
      customer_id: customer,
      name: `Store ${i}`,
    }));
    const file = path.join(cli.dir, 'big.json');
    await writeFile(file, JSON.stringify({ customers: [{ id: customer, name: 'Big' }], merchants }));
    const res = await feegate('import', file);
    assert.equal(res.code, 0, res.stderr.slice(0, 500));
    assert.equal(res.stderr, '');
    assert.deepEqual(res.stdout.trimEnd().split('\n'), [
      'imported {"customers":1,"merchants":50000,"users":0,"payment_plans":0,"assignments":0}',
    ]);
    assert.equal(
      await withDb(
        async (d) =>
          (await d.db.select({ n: count() }).from(merchantsTable).where(eq(merchantsTable.customerId, customer)))[0]!.n,
      ),
      50_000,
    );
  });

  it('import never moves a user: exit 1 naming the e-mail, no SQL, nothing written', async () => {
    const [alpha, beta, store] = [
      'c6000000-0000-4000-8000-000000000001',
      'c6000000-0000-4000-8000-000000000002',
      'd6000000-0000-4000-8000-000000000001',
    ];
    const file = path.join(cli.dir, 'users.json');
    const doc = {
      customers: [
        { id: alpha, name: 'Alpha' },
        { id: beta, name: 'Beta' },
      ],
      merchants: [{ id: store, customer_id: alpha, name: 'Store' }],
      users: [
        { email: 'boss@alpha.test', type: 'CUSTOMER', customer_id: alpha, password: 'alpha-password-1' },
        { email: 'till@alpha.test', type: 'MERCHANT', customer_id: alpha, merchant_id: store },
      ],
    };
    await writeFile(file, JSON.stringify(doc));
    assert.equal((await feegate('import', file)).code, 0);
    const rows = () =>
      withDb(async (d) => ({
        users: await d.db.select().from(users).orderBy(users.email),
        customers: await d.db.select().from(customers).orderBy(customers.id),
      }));
    const before = await rows();
    for (const [email, user] of [
      ['boss@alpha.test', { ...doc.users[0], customer_id: beta }],
      ['till@alpha.test', { email: 'till@alpha.test', type: 'CUSTOMER', customer_id: alpha }],
    ] as const) {
      await writeFile(
        file,
        JSON.stringify({ ...doc, customers: [{ id: alpha, name: 'Renamed' }, doc.customers[1]], users: [user] }),
      );
      const res = await feegate('import', file);
      assert.equal(res.code, 1);
      assert.equal(res.stdout, '');
      assert.equal(res.stderr.trimEnd().split('\n').length, 1, res.stderr);
      assert.ok(res.stderr.includes(email), res.stderr);
      assert.match(res.stderr, /nothing written/);
      assert.doesNotMatch(res.stderr, /Failed query|\binsert into\b|\bselect\b.*\bfrom\b|\n\s+at |params:/i);
      assert.deepEqual(await rows(), before);
    }
  });

  it('import accepts ids in upper case and stores them in lower case', async () => {
    const [customer, store] = ['c3000000-0000-4000-8000-00000000000a', 'd3000000-0000-4000-8000-00000000000a'];
    const file = path.join(cli.dir, 'upper.json');
    await writeFile(
      file,
      JSON.stringify({
        customers: [{ id: customer.toUpperCase(), name: 'Loud' }],
        merchants: [{ id: store.toUpperCase(), customer_id: customer.toUpperCase(), name: 'Loud Store' }],
      }),
    );
    const res = await feegate('import', file);
    assert.equal(res.code, 0, res.stderr);
    const stored = await withDb((d) => d.db.select().from(merchantsTable).where(eq(merchantsTable.id, store)));
    assert.deepEqual(
      stored.map((m) => [m.id, m.customerId]),
      [[store, customer]],
    );
  });
});
