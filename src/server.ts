/**
 * Runs the service: open and migrate the database, load demo data into an
 * empty embedded database, listen, and shut down gracefully on SIGTERM/SIGINT.
 */
import { pino } from 'pino';
import { buildApp, loggerOptions } from './app.js';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { customers } from './db/schema.js';
import { DEMO_LOGINS, demoDocument } from './features/operator/demo-data.js';
import { createServices } from './services.js';

export async function openConfiguredDatabase(config: Config, log = pino({ level: config.logLevel })): Promise<Database> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
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

async function isEmpty(database: Database): Promise<boolean> {
  const rows = await database.db.select({ id: customers.id }).from(customers).limit(1);
  return rows.length === 0;
}

function demoBanner(config: Config): string {
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const [login] = DEMO_LOGINS;
  return [
    '',
    'feegate demo data loaded.',
    `  login:    ${login.user} / ${login.password}`,
    `  docs:     ${base}/docs`,
    '  try:',
    `    curl -s -X POST ${base}/v1/login -H 'Content-Type: application/json' \\`,
    `      -d '{"user":"${login.user}","password":"${login.password}"}'`,
    '',
  ].join('\n');
}

export async function serve(config: Config): Promise<void> {
  const log = pino(loggerOptions(config) as object);
  const database = await openConfiguredDatabase(config, log);
  let banner = '';
  if (database.driver === 'pglite' && config.loadDemoData && (await isEmpty(database))) {
    await loadDemoData(config, database);
    banner = demoBanner(config);
  }
  const app = await buildApp({ config, database, ownsDatabase: true, loggerInstance: log });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
  if (banner) process.stdout.write(`${banner.replaceAll(`:${config.port}`, `:${(app.server.address() as { port: number }).port}`)}\n`);
}
