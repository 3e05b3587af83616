/** The operator's command line: `feegate <command>` (npm run feegate -- <command>). */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { AppError } from './errors.js';
import { OPERATOR_CONTEXT } from './features/audit/audit-dal.js';
import { ImportError } from './features/operator/import-service.js';
import { loadDemoData, openConfiguredDatabase, serve } from './server.js';
import { createServices } from './services.js';

const USAGE = `Usage: feegate <command>

Commands:
  serve                         run the HTTP service (default)
  migrate                       apply database migrations
  demo                          load the demo data set
  import <file.json>            import customers, merchants, users, plans and assignments
  keys issue --user <email> --customer <uuid> [--merchant <uuid>]
                                issue an API key; prints the full key once

Database: DATABASE_URL=postgres://... or the embedded database in FEEGATE_DATA_DIR (./data).`;

class UsageError extends Error {}

async function withDatabase<T>(work: (ctx: { config: ReturnType<typeof loadConfig>; services: ReturnType<typeof createServices>; database: Awaited<ReturnType<typeof openConfiguredDatabase>> }) => Promise<T>): Promise<T> {
  const config = { ...loadConfig(), logLevel: 'warn' };
  const database = await openConfiguredDatabase(config);
  const services = createServices(config, database);
  try {
    return await work({ config, services, database });
  } finally {
    await services.stop();
    await database.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve(loadConfig());
      return -1; // keeps running
    case 'migrate':
      await withDatabase(async () => {});
      console.log('migrations applied');
      return 0;
    case 'demo':
      await withDatabase(({ config, database }) => loadDemoData(config, database));
      console.log('demo data loaded');
      return 0;
    case 'import': {
      const file = rest[0];
      if (!file) throw new UsageError('import needs a file: feegate import <file.json>');
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(file, 'utf8'));
      } catch (err) {
        throw new ImportError('$', `cannot read ${file} as JSON: ${(err as Error).message}`);
      }
      const summary = await withDatabase(({ services }) => services.importer.importDocument(doc));
      console.log(`imported ${JSON.stringify(summary)}`);
      return 0;
    }
    case 'keys': {
      const { positionals, values } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { user: { type: 'string' }, customer: { type: 'string' }, merchant: { type: 'string' } },
      });
      if (positionals[0] !== 'issue' || !values.user || !values.customer) {
        throw new UsageError('keys issue --user <email> --customer <uuid> [--merchant <uuid>]');
      }
      return issueKey(values.user, values.customer, values.merchant);
    }
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function issueKey(user: string, customer: string, merchant: string | undefined): Promise<number> {
  const record = await withDatabase(({ services }) =>
    services.apiKeys.issueByOperator({ email: user, customerId: customer, merchantId: merchant ?? null }, OPERATOR_CONTEXT),
  );
  console.log(`API key ${record.id} for ${record.user} (${record.user_type}); shown once, store it now:`);
  console.log(record.api_key);
  return 0;
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  try {
    const code = await run(argv);
    if (code >= 0) process.exit(code);
  } catch (err) {
    if (err instanceof UsageError) console.error(`feegate: ${err.message}\n\n${USAGE}`);
    else if (err instanceof ConfigError) console.error(`feegate: configuration error: ${err.message}`);
    else if (err instanceof AppError) console.error(`feegate: ${err.code}: ${err.detail}`);
    else if (err instanceof ImportError) console.error(`feegate: import refused, nothing written: ${err.message}`);
    else console.error(`feegate: ${(err as Error).message}`);
    process.exit(1);
  }
}
