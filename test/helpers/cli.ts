/**
 * Runs the operator command line as a real process, on the test file's database:
 * the bundle `npm start` runs (scripts/service-bundle.mjs), built once per test
 * process, since a process through tsx takes about 2.5 s to start and the
 * command-line tests start hundreds. `FEEGATE_BIN` (bin/feegate.js, the sources
 * through tsx) is what `npm run feegate` runs; test/operator/cli.test.ts runs it too.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { promisify } from 'node:util';
import { count } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { bundleService } from '../../scripts/service-bundle.mjs';
import { buildApp } from '../../src/app.js';
import { type Config, TEST_SECRET_KEYS, testConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { customers } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from './database.js';

const run = promisify(execFile);
export const FEEGATE_BIN = path.resolve('bin/feegate.js');

/**
 * The hashing settings of `testConfig` for a process a test starts: with the test runs filling
 * both cores, an idle-priority hash (`feegate demo` hashes the demo logins) waits minutes for a slice.
 */
export const TEST_PROCESS_HASHING = {
  LOGIN_HASH_IDLE_PRIORITY: String(testConfig().loginHashIdlePriority),
  LOGIN_HASH_CPU_PERCENT: String(testConfig().loginHashCpuPercent),
};

let bundle: Promise<string> | undefined;
/** The bundle, in .tmp/ inside the package so that it finds migrations/ and assets/ as dist/ does. */
function cliBundle(): Promise<string> {
  bundle ??= (async () => {
    const outdir = path.resolve(`.tmp/test-cli-${process.pid}`);
    process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
    return bundleService(outdir);
  })();
  return bundle;
}

/** One command's limit: on a loaded CI machine an embedded database alone took a command 40 s to open. */
const CLI_TIMEOUT_MS = 180_000;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `feegate <args>` with `env`; resolves with its exit code and output whatever the code. `bin`: FEEGATE_BIN instead of the bundle. */
export async function runFeegate(args: string[], env: NodeJS.ProcessEnv, bin?: string): Promise<CliResult> {
  try {
    const program = bin ?? (await cliBundle());
    const { stdout, stderr } = await run(process.execPath, [program, ...args], { env, timeout: CLI_TIMEOUT_MS });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

export interface CliDatabase {
  /** A temporary directory, removed after the file. */
  dir: string;
  /** The environment that points the command line at the file's database. */
  env: NodeJS.ProcessEnv;
  /** The PostgreSQL database, when TEST_DATABASE_URL is set; otherwise an embedded directory in `dir`. */
  pg: TestDatabase | undefined;
}

/** A database for the command line of one test file: fresh on PostgreSQL, or an embedded directory. */
export function useCliDatabase(prefix: string): CliDatabase {
  const state: CliDatabase = { dir: '', env: {}, pg: undefined };
  before(async () => {
    state.dir = await mkdtemp(path.join(tmpdir(), prefix));
    if (process.env.TEST_DATABASE_URL) {
      state.pg = await createTestDatabase();
      state.env = {
        ...process.env,
        ...TEST_PROCESS_HASHING,
        DATABASE_URL: state.pg.url,
        FEEGATE_SECRET_KEYS: TEST_SECRET_KEYS,
      };
    } else {
      // The tests' ring, so that an app a test builds on the same directory reads what the command line wrote.
      state.env = {
        ...process.env,
        ...TEST_PROCESS_HASHING,
        DATABASE_URL: '',
        FEEGATE_DATA_DIR: path.join(state.dir, 'data'),
        FEEGATE_SECRET_KEYS: TEST_SECRET_KEYS,
      };
    }
  });
  after(async () => {
    await state.pg?.drop();
    await rm(state.dir, { recursive: true, force: true });
  });
  return state;
}

/** What a test reads of the command line's database, and an instance it runs on it (after the CLI process has exited). */
export function cliDatabaseAccess(cli: CliDatabase) {
  // A connection of its own each time: on the embedded database only one process may hold it.
  const open = () =>
    cli.pg ? openDatabase({ databaseUrl: cli.pg.url }) : openDatabase({ dataDir: cli.env.FEEGATE_DATA_DIR! });
  /** Reads the database the CLI wrote. */
  async function withDb<T>(work: (db: Database) => Promise<T>): Promise<T> {
    const database = await open();
    try {
      return await work(database);
    } finally {
      await database.close();
    }
  }
  /** A running instance on the CLI's database (on the embedded one, closed before the CLI may open it). */
  async function withApp<T>(overrides: Partial<Config>, work: (app: FastifyInstance) => Promise<T>): Promise<T> {
    const app = await buildApp({ config: testConfig(overrides), database: await open(), ownsDatabase: true });
    try {
      await app.ready();
      return await work(app);
    } finally {
      await app.close();
    }
  }
  const customerCount = () => withDb(async (d) => (await d.db.select({ n: count() }).from(customers))[0]!.n);
  return { withDb, withApp, customerCount };
}
