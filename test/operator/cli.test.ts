/** The operator command line, run as a real process against a real database. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { count, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, customers, merchants as merchantsTable, users } from '../../src/db/schema.js';
import { DEMO_CUSTOMERS, DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import { bearer } from '../helpers/app.js';
import { FEEGATE_BIN, runFeegate, useCliDatabase } from '../helpers/cli.js';
import { loginAs } from '../helpers/fixtures.js';
import { NEEDS_REDIS, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);

const cli = useCliDatabase('feegate-cli-');
const feegate = (...args: string[]) => runFeegate(args, cli.env);

/** Reads the database the CLI wrote (after the CLI process has exited). */
async function withDb<T>(work: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const database = cli.pg
    ? await openDatabase({ databaseUrl: cli.pg.url })
    : await openDatabase({ dataDir: cli.env.FEEGATE_DATA_DIR! });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/** A running instance on the CLI's database (on the embedded one, closed before the CLI may open it). */
async function withApp<T>(overrides: Partial<Config>, work: (app: FastifyInstance) => Promise<T>): Promise<T> {
  const database = cli.pg
    ? await openDatabase({ databaseUrl: cli.pg.url })
    : await openDatabase({ dataDir: cli.env.FEEGATE_DATA_DIR! });
  const app = await buildApp({ config: testConfig(overrides), database, ownsDatabase: true });
  try {
    await app.ready();
    return await work(app);
  } finally {
    await app.close();
  }
}

const me = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
const refresh = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: token } });
const wrongLogin = (app: FastifyInstance, user: string) =>
  app.inject({ method: 'POST', url: '/v1/login', payload: { user, password: 'a-wrong-guess' } });

const customerCount = () => withDb(async (d) => (await d.db.select({ n: count() }).from(customers))[0]!.n);

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

  it('users logout ends every login of a login user, on every running instance', async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acme = DEMO_LOGINS[0];
    const logout = () => feegate('users', 'logout', '--email', acme.user.toUpperCase());
    const assertEnded = async (
      app: FastifyInstance,
      tokens: Array<{ access_token: string; refresh_token: string }>,
    ) => {
      for (const token of tokens) {
        await waitFor(
          async () => (await me(app, token.access_token)).statusCode === 401,
          'the running instance refused the access token',
          { timeoutMs: 1000 },
        );
        assert.equal((await refresh(app, token.refresh_token)).statusCode, 401);
      }
    };
    let res: Awaited<ReturnType<typeof logout>>;
    if (cli.pg) {
      // PostgreSQL: the instance runs while the command line ends its logins.
      res = await withApp({}, async (app) => {
        const tokens = [await loginAs(app, acme), await loginAs(app, acme)];
        const out = await logout();
        await assertEnded(app, tokens);
        return out;
      });
    } else {
      // Embedded: one process at a time; the next start refuses the tokens.
      const tokens = await withApp({}, async (app) => [await loginAs(app, acme), await loginAs(app, acme)]);
      res = await logout();
      await withApp({}, (app) => assertEnded(app, tokens));
    }
    assert.equal(res.code, 0, res.stderr);
    assert.ok(
      Number(/^(\d+) login\(s\) of \S+ ended, on every running instance\n$/.exec(res.stdout)?.[1]) >= 2,
      res.stdout,
    );
    const unknown = await feegate('users', 'logout', '--email', 'nobody@acme.test');
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'feegate: user_not_found: No login user has this e-mail.\n');
    const bad = await feegate('users', 'logout', '--email', 'not-an-email');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--email "not-an-email" is not an e-mail address/);
    const missing = await feegate('users', 'unlock');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--email is required; usage: feegate users unlock --email <e-mail>/);
  });

  it('users unlock clears the failed-login counts of every running instance', async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acme = DEMO_LOGINS[0];
    const overrides = { loginMaxFailures: 2, rateLimitAnonymousPerMinute: 0 };
    if (!cli.pg) {
      // Embedded: no instance can run beside the command line; its counts die with it.
      const res = await feegate('users', 'unlock', '--email', acme.user);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, `failed-login counts of ${acme.user} cleared, on every running instance\n`);
      return;
    }
    await withApp(overrides, async (app) => {
      for (let i = 0; i < 2; i++) assert.equal((await wrongLogin(app, acme.user)).statusCode, 401);
      assert.equal((await app.inject({ method: 'POST', url: '/v1/login', payload: acme })).statusCode, 429);
      const res = await feegate('users', 'unlock', '--email', acme.user.toUpperCase());
      assert.equal(res.code, 0, res.stderr);
      await waitFor(
        async () => (await app.inject({ method: 'POST', url: '/v1/login', payload: acme })).statusCode === 200,
        'the running instance forgot its counts',
      );
    });
  });

  it('users unlock clears the counts Redis holds for every instance', { skip: NEEDS_REDIS }, async () => {
    if ((await customerCount()) === 0) assert.equal((await feegate('demo')).code, 0);
    const acme = DEMO_LOGINS[0];
    const overrides = {
      loginMaxFailures: 2,
      rateLimitAnonymousPerMinute: 0,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: uniquePrefix(),
    };
    await withApp(overrides, async (app) => {
      for (let i = 0; i < 2; i++) assert.equal((await wrongLogin(app, acme.user)).statusCode, 401);
    });
    // A fresh instance knows only what Redis holds: still locked out.
    const login = (app: FastifyInstance) => app.inject({ method: 'POST', url: '/v1/login', payload: acme });
    assert.equal(await withApp(overrides, async (app) => (await login(app)).statusCode), 429);
    const res = await runFeegate(['users', 'unlock', '--email', acme.user], {
      ...cli.env,
      REDIS_URL: overrides.redisUrl,
      REDIS_KEY_PREFIX: overrides.redisKeyPrefix,
    });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await withApp(overrides, async (app) => (await login(app)).statusCode), 200);
    const away = await runFeegate(['users', 'unlock', '--email', acme.user], {
      ...cli.env,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    assert.equal(away.code, 1);
    assert.match(away.stderr, /^feegate: cannot reach Redis \(REDIS_URL\) to clear the counts it shares/);
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
