/**
 * `npm run bench [-- --embedded] [--only firststart,keyauth,bearer,listing,fullpage,at,storm,bulk,scheduled,approval,webhooks,ratelimit,idempotency,restricted,quotes,tracing,auditexport] [--duration 10] [--rounds 5] [--profile] [--keep-db]`
 *
 * One command: a fresh database, the bench data set, the service as a child
 * process, each phase in turn against it, then a table, budget verdicts and
 * bench/results/latest-<driver>.json. Everything is cleaned up, also on failure.
 * Exits 1 when a line fails (a budget, or non-2xx answers under load), 2 when a
 * phase fails (e.g. a call it needs does not answer as it should; the other
 * phases still run and the table shows their lines) or on an error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import * as phases from './phases.js';
import { phaseRunner } from './phase-runner.js';
import { runOptions } from './run-options.js';
import { loginStorm, scheduledAll } from './probed-phases.js';
import { runWebhookBench, startWebhookReceiver } from './webhooks.js';
import { idempotentKeyCreation } from './idempotency.js';
import { oneQuote, quoteStream } from './quotes.js';
import { auditExport } from './audit-export.js';
import { restrictedKeyAuth } from './restricted-keys.js';
import { runApprovalBench } from './approvals.js';
import { tracingConfigured } from '../src/lib/tracing.js';
import { tracedKeyAuth } from './tracing.js';
import { type BenchReport, machine } from './report.js';
import { failures, renderTable, writeJson } from './report-table.js';
import { dropPgDatabase, recreatePgDatabase, seedDatabase } from './seed.js';
import { generateKeyEntry } from '../src/lib/key-ring.js';
import { type ServerProcess, startServer } from './server-process.js';

const { wanted, durationSeconds, stormRounds, embedded, profile, keepDb } = runOptions();

const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * The storm measures what argon2 does to a cheap request beside it, so the guards
 * that would refuse most of its logins up front (the per-address limit, and the
 * attempts counted before hashing) are off; tests cover them.
 */
const SERVICE_ENV = {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
  LOGIN_MAX_FAILURES: '0',
  // The fee quotes' stream of 1,000,000 lines is one request: on a loaded machine it may take longer than 30 s.
  REQUEST_TIMEOUT_SECONDS: '600',
};
// One per process: two bench runs on one server must not drop each other's database.
const BENCH_DB = `feegate_bench_${process.pid}`;
const log = (message: string) => console.error(`[bench] ${message}`);

const dataDir = embedded ? mkdtempSync(path.join(os.tmpdir(), 'feegate-bench-')) : undefined;
// One key ring for the run: the seeding and the service read the same secrets.
const ringEnv = { FEEGATE_SECRET_KEYS: generateKeyEntry() };
const dbEnv: Record<string, string> = dataDir
  ? { DATABASE_URL: '', FEEGATE_DATA_DIR: dataDir, FEEGATE_DEMO: 'false', ...ringEnv }
  : { DATABASE_URL: benchDatabaseUrl(), ...ringEnv };

function benchDatabaseUrl(): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${BENCH_DB}`;
  return url.toString();
}
const serviceConfig = loadConfig({
  LOGIN_CONCURRENCY: process.env.LOGIN_CONCURRENCY,
  LOGIN_QUEUE_LIMIT: process.env.LOGIN_QUEUE_LIMIT,
});
const profileDir = fileURLToPath(new URL('./results/profiles/', import.meta.url));
/** A service process's Node options: with --profile, each writes its CPU profile there. */
const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];

let server: ServerProcess | undefined;
let cleaned = false;
async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  else if (keepDb) log(`kept database ${BENCH_DB}`);
  else
    await dropPgDatabase(ADMIN_URL, BENCH_DB).catch((err: Error) => log(`could not drop ${BENCH_DB}: ${err.message}`));
}
process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

const { phase, failed: failedPhases } = phaseRunner(log, () => server?.peakRss());

async function main(): Promise<BenchReport> {
  const started = performance.now();
  const report: BenchReport = {
    driver: embedded ? 'pglite' : 'postgres',
    startedAt: new Date().toISOString(),
    seconds: 0,
    machine: machine(),
    settings: {
      durationSeconds,
      connections: 50,
      // What the service will use: the environment's values, else its defaults.
      loginConcurrency: serviceConfig.loginConcurrency,
      loginQueueLimit: serviceConfig.loginQueueLimit,
    },
  };
  /** Stops a service process the bench is done with, its peak RSS counted first: VmHWM goes with the process. */
  const retire = async (service: ServerProcess) => {
    report.peakRssBytes = Math.max(report.peakRssBytes ?? 0, service.peakRss());
    await service.stop();
  };

  if (wanted('firststart')) {
    report.firstStart = await phase(
      '0. first start: a fresh server on an empty embedded data directory, with the demo data',
      () => phases.firstStart(log),
    );
  }
  if (!dataDir) await recreatePgDatabase(ADMIN_URL, BENCH_DB);
  log(`seeding ${report.driver} database`);
  // Before the server starts: an embedded data directory can only be open in one process.
  const seed = await seedDatabase(dbEnv, { scheduledAll: wanted('scheduled'), auditRecords: wanted('auditexport') });
  log(`starting the service${profile ? ` with --cpu-prof into ${profileDir}` : ''}`);
  server = await startServer({
    env: { ...dbEnv, ...SERVICE_ENV },
    nodeArgs,
  });
  const ctx: phases.PhaseContext = {
    baseUrl: server.baseUrl,
    durationSeconds,
    connections: report.settings.connections,
    seed,
    log,
  };

  report.ceiling = await phase('1. ceiling: GET /health', () => phases.ceiling(ctx));
  if (wanted('keyauth') || wanted('listing')) {
    const keys = await phase('creating 1,000 API keys through POST /v1/api-keys', () => phases.createKeys(ctx));
    if (keys && wanted('keyauth'))
      report.keyAuth = await phase('2. key authentication: GET /v1/users/me with X-Api-Key', () =>
        phases.keyAuth(ctx, keys),
      );
    if (keys && wanted('listing'))
      report.listing = await phase('3. listing: GET /v1/api-keys?size=10 with X-Api-Key', () =>
        phases.listing(ctx, keys),
      );
  }
  if (wanted('restricted')) {
    report.restrictedKeyAuth = await phase(
      '2c. restricted keys: GET /v1/users/me with keys of 5 permissions and 3 allowed ranges, and without',
      () => restrictedKeyAuth(ctx),
    );
  }
  if (wanted('idempotency')) {
    report.idempotentCreation = await phase(
      '8. key creation: POST /v1/api-keys without, with Idempotency-Key and replayed (each key deleted once made)',
      () => idempotentKeyCreation(ctx),
    );
  }
  if (wanted('bearer')) {
    report.bearerAuth = await phase('2b. bearer authentication: GET /v1/users/me with an access token (JWT)', () =>
      phases.bearerAuth(ctx),
    );
  }
  if (wanted('at')) {
    report.feeRulesAt = await phase(
      '3b. fee rules at an instant: GET /v1/merchants/{id}/fee-rules?at= (present and history)',
      () => phases.feeRulesAt(ctx),
    );
  }
  if (wanted('fullpage')) {
    report.fullPage = await phase(
      '3c. a full page: GET /v1/merchants?size=10000 of 12,000 merchants, with an access token',
      () => phases.fullPage(ctx),
    );
  }
  if (wanted('quotes')) {
    report.feeQuote = await phase('9a. fee quote: POST /v1/fee-quotes of one transaction', () => oneQuote(ctx));
    report.quoteStream = await phase('9b. fee quotes: NDJSON of 1,000,000 transactions over 1,000 merchants', () =>
      quoteStream(ctx, () => server!.rss()),
    );
  }
  if (wanted('auditexport')) {
    report.auditExport = await phase(
      '10. audit export: GET /v1/audit-events/export of 1,000,000 records (NDJSON)',
      () => auditExport(ctx, () => server!.rss()),
    );
  }
  if (wanted('storm')) {
    report.loginStorm = await phase('4. login storm: POST /v1/login beside a fixed-rate /health probe', () =>
      loginStorm(ctx, stormRounds),
    );
  }
  if (wanted('bulk')) {
    report.bulk = await phase('5. bulk assignment: POST /v1/fee-rules/bulk-assign/all', () =>
      phases.bulkAssign(ctx, { embedded, adminUrl: ADMIN_URL }),
    );
  }
  if (wanted('scheduled')) {
    report.scheduledAll = await phase(
      '5c. scheduled /all: 100,000 merchants x 12 plans applied by the service while /health is probed',
      () => scheduledAll(ctx),
    );
  }
  if (wanted('approval')) {
    report.approvedAll = await phase(
      '5d. approving a held /all: 100,000 merchants x 12 plans, beside the same /all made at once',
      () => runApprovalBench({ embedded, adminUrl: ADMIN_URL, log }),
    );
  }
  report.serverLog = server.logCounts();
  if (wanted('webhooks')) {
    // On its own service process: the only one allowed to reach the bench's receiver.
    report.webhooks = await phase('7. webhooks: 10,000 at once, 10,000 at 500/s, to 127.0.0.1', async () => {
      const receiver = await startWebhookReceiver();
      try {
        await retire(server!);
        server = await startServer({
          env: {
            ...dbEnv,
            ...SERVICE_ENV,
            WEBHOOK_ALLOW_HTTP: 'true',
            WEBHOOK_ALLOWED_HOSTS: receiver.host,
            // 500 mock payment notifications a round: the per-customer limit of test sends would refuse all but 10.
            WEBHOOK_TEST_SENDS_PER_CUSTOMER_PER_MINUTE: '0',
          },
          nodeArgs,
        });
        const here = { ...ctx, baseUrl: server.baseUrl };
        const keys = await phases.createKeys(here, { users: 10, userPrefix: 'webhook-bench' });
        return await runWebhookBench(here, receiver, keys);
      } finally {
        await receiver.close();
      }
    });
    // What the delivering service logged counts too (a failed delivery tick, say).
    for (const [line, count] of Object.entries(server.logCounts()))
      report.serverLog[line] = (report.serverLog[line] ?? 0) + count;
  }
  if (wanted('tracing')) {
    // Each side on service processes of its own: tracing is set when a process starts.
    report.tracedKeyAuth = await phase(
      '2d. key auth with tracing at a sampling ratio of 0.1 (OTLP to 127.0.0.1), and off',
      async () => {
        // The service running now: the webhook phase, before this one, may have replaced line 1's.
        const keys = await phases.createKeys(
          { ...ctx, baseUrl: server!.baseUrl },
          { users: 10, userPrefix: 'bench-tracing' },
        );
        // The first untraced process goes on serving the phases after (embedded, it has stopped); the others stop here.
        // The traced processes' memory is a line of its own.
        let untraced: ServerProcess | undefined;
        const traced: ServerProcess[] = [];
        const others: ServerProcess[] = [];
        try {
          const result = await tracedKeyAuth(
            ctx,
            keys,
            async (env) => {
              if (!untraced && traced.length === 0) await retire(server!);
              const spawned = await startServer({
                env: { ...dbEnv, ...SERVICE_ENV, ...env },
                nodeArgs,
              });
              if (tracingConfigured(env)) traced.push(spawned);
              else if (untraced) others.push(spawned);
              else untraced = spawned;
              return spawned;
            },
            // An embedded data directory opens in one process at a time: there the sides run one after the other.
            { together: !embedded },
          );
          return { ...result, tracedPeakRssBytes: Math.max(0, ...traced.map((service) => service.peakRss())) };
        } finally {
          if (untraced) server = untraced;
          for (const service of others) await retire(service);
          for (const service of traced) await service.stop();
        }
      },
    );
  }
  if (wanted('ratelimit')) {
    // Last, on its own service process: only this phase counts in Redis.
    const rateLimited = await phase(
      '6. rate-limited keys: GET /v1/users/me with X-Api-Key, counters in Redis',
      async () => {
        await retire(server!);
        server = await startServer({
          env: { ...dbEnv, ...SERVICE_ENV, REDIS_URL, REDIS_KEY_PREFIX: `feegate-bench:${process.pid}:` },
        });
        return phases.rateLimitedKeyAuth({ ...ctx, baseUrl: server.baseUrl });
      },
    );
    report.rateLimited = rateLimited?.result;
    report.rateLimitedCeiling = rateLimited?.ceiling;
  }
  // The service still running: every one before it was counted as it was retired.
  report.peakRssBytes = Math.max(report.peakRssBytes ?? 0, server.peakRss());
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

try {
  const report = await main();
  await cleanup();
  console.log(`\n${renderTable(report)}\n`);
  log(`results written to ${path.relative(process.cwd(), writeJson(report))}`);
  const failed = failures(report);
  if (failed.length) {
    for (const line of failed) log(`FAIL ${line}`);
    process.exitCode = 1;
  }
  if (failedPhases.length) {
    for (const message of failedPhases) log(message);
    process.exitCode = 2;
  }
} catch (err) {
  log(`failed: ${(err as Error).stack ?? err}`);
  await cleanup();
  process.exitCode = 2;
}
