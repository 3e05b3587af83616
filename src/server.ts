/**
 * Runs the service: open and migrate the database, load demo data into an
 * empty embedded database when that is safe, listen, and shut down gracefully
 * on SIGTERM/SIGINT.
 */
import { lookup } from 'node:dns/promises';
import { BlockList } from 'node:net';
import closeWithGrace from 'close-with-grace';
import { destination, pino, type Logger } from 'pino';
import type { Log } from './lib/log.js';
import { buildApp, loggerOptions } from './app.js';
import { type Config, keyRingOf } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { DEMO_LOGINS, demoDocument } from './features/operator/demo-data.js';
import type { PasswordHasher } from './features/credentials/password-hasher.js';
import { createDataLayer } from './data-layer.js';
import { withKeyRing } from './key-ring-file.js';
import { createSealedValues } from './lib/sealed-values.js';
import { createServices } from './services.js';
import { stopTracing } from './lib/tracing.js';

/** How long requests in flight may take to finish once a shutdown starts; then the process exits 1. */
const SHUTDOWN_GRACE_MS = 10_000;

/** The signals that ask for a graceful stop; handled here, not by close-with-grace (see onStopSignal). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** A repeat of a stop signal within this time is the same request, not an impatient second one. */
const REPEATED_SIGNAL_MS = 2_000;

/**
 * Calls `stop` on the first SIGINT or SIGTERM, and exits 1 at once on a later one.
 * Written here because close-with-grace treats any second signal as "exit now",
 * and Ctrl-C on `npm start` delivers SIGINT twice: once from the terminal to the
 * whole group, once forwarded by npm. Its listener also comes off between the two,
 * so the second could even kill the process before anything was logged. These
 * listeners stay installed for the life of the process.
 */
function onStopSignal(log: Logger, stop: () => void): void {
  let firstAt: number | undefined;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (firstAt === undefined) {
        firstAt = Date.now();
        log.info({ signal }, 'shutting down: finishing requests in flight');
        stop();
      } else if (Date.now() - firstAt > REPEATED_SIGNAL_MS) {
        log.error({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
    });
  }
}

export async function openConfiguredDatabase(
  config: Config,
  log = pino({ level: config.logLevel }),
): Promise<Database> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    lockTimeoutMs: config.databaseLockTimeoutMs,
    onError: (err) => log.warn({ err: { message: err.message } }, 'database connection error'),
  });
  await database.migrate();
  return database;
}

export async function loadDemoData(config: Config, database: Database): Promise<void> {
  const services = createServices(config, database);
  try {
    await services.importer.importDocument(demoDocument());
  } finally {
    await services.stop();
  }
}

function demoBanner(config: Config): string {
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const [login] = DEMO_LOGINS;
  return [
    '',
    'feegate demo data loaded.',
    `  login:    ${login.user} / ${login.password}`,
    `  docs:     ${base}/docs`,
    `  console:  ${base}/console/`,
    '  try:',
    `    curl -s -X POST ${base}/v1/login -H 'Content-Type: application/json' \\`,
    `      -d '{"user":"${login.user}","password":"${login.password}"}'`,
    '',
  ].join('\n');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether every address HOST stands for is a loopback one: only then can no other machine reach the server. */
export async function listensOnLoopback(host: string): Promise<boolean> {
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.length > 0 && addresses.every((a) => LOOPBACK.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4'));
}

/**
 * The demo users' passwords are published (README, the banner), so the demo data
 * set goes into an empty embedded database only while the server listens on
 * loopback, unless FEEGATE_DEMO=true asks for it anyway; and demo users whose
 * published password still works, found while listening beyond loopback, are
 * reported in one warning line. Answers the banner to print when the data set
 * was loaded.
 */
export async function prepareDemoData(
  config: Config,
  database: Database,
  hasher: PasswordHasher,
  log: Log,
): Promise<string> {
  const loopback = await listensOnLoopback(config.host);
  const { dal } = createDataLayer(database, createSealedValues(keyRingOf(config), log));
  let banner = '';
  if (
    database.driver === 'pglite' &&
    (config.loadDemoData === 'always' || (config.loadDemoData === 'on-loopback' && loopback)) &&
    (await dal.import.hasNoCustomers())
  ) {
    await loadDemoData(config, database);
    banner = demoBanner(config);
  }
  if (!loopback) {
    const hashes = new Map(
      (await dal.import.loginPasswordHashes(DEMO_LOGINS.map((login) => login.user))).map((u) => [
        u.email,
        u.passwordHash,
      ]),
    );
    const open: string[] = [];
    for (const login of DEMO_LOGINS) {
      if (hashes.has(login.user) && (await hasher.verify(async () => hashes.get(login.user)!, login.password)))
        open.push(login.user);
    }
    if (open.length > 0) {
      log.warn(
        { users: open, host: config.host },
        `demo users with published passwords (${open.join(', ')}) can log in, and the server listens on ${config.host}, beyond loopback: remove them or listen on 127.0.0.1`,
      );
    }
  }
  return banner;
}

export async function serve(settings: Config): Promise<void> {
  const { config, generated } = withKeyRing(settings);
  // Synchronous writes: pino's default buffers and loses the last lines when the
  // process exits right after a signal (seen under `npm start` with Ctrl-C).
  const log = pino(loggerOptions(config) as object, destination({ dest: 1, sync: true }));
  if (generated)
    log.warn(
      { file: generated },
      `generated a key ring in ${generated}: it encrypts the secrets in the database; back it up apart from the database (docs/production.md, "Keys and secrets")`,
    );
  const database = await openConfiguredDatabase(config, log);
  const app = await buildApp({ config, database, ownsDatabase: true, loggerInstance: log });
  const banner = await prepareDemoData(config, database, app.services.hasher, log);
  // Signals finish the requests in flight; an uncaught exception or unhandled
  // rejection is logged and closes the same way, then the process exits 1.
  const grace = closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger: log, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    if (err) app.log.fatal({ err }, 'uncaught error: shutting down');
    await app.close();
    await stopTracing();
    app.log.info('closed');
  });
  onStopSignal(log, () => void grace.close());
  await app.listen({ host: config.host, port: config.port });
  if (banner)
    process.stdout.write(
      `${banner.replaceAll(`:${config.port}`, `:${(app.server.address() as { port: number }).port}`)}\n`,
    );
}
