/**
 * The command line's help, version and errors (README, Command line, and
 * docs/design.md#operating-decisions): every
 * error is one line, without SQL or stack, exit 1, and nothing written.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { count } from 'drizzle-orm';
import { TEST_SECRET_KEYS } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { apiKeys, users } from '../../src/db/schema.js';
import { DEMO_CUSTOMERS } from '../../src/features/operator/demo-data.js';
import { runFeegate, useCliDatabase } from '../helpers/cli.js';

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const SQL_OR_STACK = /Failed query|\binsert into\b|\bselect\b.*\bfrom\b|\n\s+at |SQLSTATE|params:/i;

const cli = useCliDatabase('feegate-cli-errors-');
const feegate = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => runFeegate(args, { ...cli.env, ...extraEnv });

/** Exit 1, exactly one line on stderr, nothing on stdout, no SQL and no stack. */
async function assertOneLineError(args: string[], expected: RegExp, extraEnv: NodeJS.ProcessEnv = {}) {
  const res = await feegate(args, extraEnv);
  assert.equal(res.code, 1, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
  assert.equal(res.stdout, '');
  const lines = res.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line expected, got:\n${res.stderr}`);
  assert.match(lines[0]!, /^feegate: /);
  assert.match(lines[0]!, expected);
  assert.doesNotMatch(res.stderr, SQL_OR_STACK);
}

async function rows() {
  const database = cli.pg
    ? await openDatabase({ databaseUrl: cli.pg.url })
    : await openDatabase({ dataDir: cli.env.FEEGATE_DATA_DIR! });
  try {
    await database.migrate();
    const n = async (table: typeof users | typeof apiKeys) =>
      (await database.db.select({ n: count() }).from(table))[0]!.n;
    return { users: await n(users), apiKeys: await n(apiKeys) };
  } finally {
    await database.close();
  }
}

describe('command line: help and version', () => {
  it('`npm run feegate` with no command prints the commands and exits 0, starting no server', async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'feegate'], { env: cli.env, timeout: 60_000 });
    assert.match(stdout, /Usage: feegate <command>/);
    for (const command of [
      'serve',
      'migrate',
      'demo',
      'import <file.json>',
      'keys issue --user <email>',
      'help',
      'version',
    ]) {
      assert.ok(stdout.includes(`  ${command}`), `help lists ${command}`);
    }
  });

  it('`help`, `--help` and `-h` print the same help and exit 0', async () => {
    const outputs = await Promise.all([['help'], ['--help'], ['-h']].map((args) => feegate(args)));
    for (const res of outputs) {
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /Commands:/);
      assert.equal(res.stdout, outputs[0]!.stdout);
    }
  });

  it('`--version` prints the package version', async () => {
    const res = await feegate(['--version']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trim(), VERSION);
  });
});

describe('command line: usage and input errors are one line, before any database work', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"; commands: .*keys issue/],
    ['an unknown subcommand', ['keys', 'frobnicate'], /unknown command "keys frobnicate"/],
    [
      'an unknown option',
      ['keys', 'issue', '--user', 'a@acme.test', '--customer', DEMO_CUSTOMERS.acme, '--colour', 'red'],
      /Unknown option '--colour'; usage: feegate keys issue/,
    ],
    ['missing options', ['keys', 'issue', '--user', 'a@acme.test'], /--user and --customer are required/],
    ['an option without its value', ['keys', 'issue', '--user'], /--user.*argument missing|usage: feegate keys issue/],
    [
      'a user that is not an e-mail',
      ['keys', 'issue', '--user', 'not-an-email', '--customer', DEMO_CUSTOMERS.acme],
      /--user "not-an-email" is not an e-mail address/,
    ],
    [
      'a customer that is not a UUID',
      ['keys', 'issue', '--user', 'a@acme.test', '--customer', 'acme'],
      /--customer "acme" is not a UUID/,
    ],
    [
      'a merchant that is not a UUID',
      ['keys', 'issue', '--user', 'a@acme.test', '--customer', DEMO_CUSTOMERS.acme, '--merchant', '42'],
      /--merchant "42" is not a UUID/,
    ],
    ['import without a file', ['import'], /import needs a file; usage: feegate import <file.json>/],
    [
      'import of a missing file',
      ['import', '/nonexistent/feegate.json'],
      /cannot read \/nonexistent\/feegate\.json: ENOENT: no such file/,
    ],
    ['an extra argument', ['migrate', 'now'], /Unexpected argument 'now'; usage: feegate migrate/],
  ];
  for (const [name, args, expected] of cases) {
    it(`refuses ${name}`, () => assertOneLineError(args, expected));
  }

  it('bad configuration names the variable', () =>
    assertOneLineError(['migrate'], /configuration error: PORT must be a whole number/, { PORT: 'eighty' }));

  it('an unreachable PostgreSQL server is one line, without the driver error', () =>
    assertOneLineError(['migrate'], /cannot reach the database; check DATABASE_URL/, {
      DATABASE_URL: 'postgres://feegate@127.0.0.1:1/none',
      FEEGATE_SECRET_KEYS: TEST_SECRET_KEYS,
    }));
});

describe('command line: refusals of the database are one line, and nothing is written', () => {
  it('keys issue for an unknown customer says so, without the failed query', async () => {
    const unknown = 'c0000000-0000-4000-8000-0000000000ff';
    await assertOneLineError(
      ['keys', 'issue', '--user', 'a@acme.test', '--customer', unknown],
      new RegExp(`no customer with customer_id ${unknown}; nothing was written`),
    );
    assert.deepEqual(await rows(), { users: 0, apiKeys: 0 });
  });

  it('keys issue with an invalid e-mail writes nothing', async () => {
    await assertOneLineError(
      ['keys', 'issue', '--user', 'not-an-email', '--customer', DEMO_CUSTOMERS.acme],
      /is not an e-mail address/,
    );
    assert.deepEqual(await rows(), { users: 0, apiKeys: 0 });
  });
});
