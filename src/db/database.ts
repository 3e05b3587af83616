/**
 * One interface over both drivers: `pg` for a PostgreSQL server (postgres.ts),
 * PGlite for the embedded default (pglite.ts). Everything above src/db sees only
 * `Database` and the helpers of database-core.ts.
 */
import type { Database, DatabaseOptions } from './database-core.js';

export * from './database-core.js';

/** The chosen driver's modules only: a process on PostgreSQL never holds PGlite's code (V8 keeps every module's source), nor the other way round. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return (await import('./postgres.js')).openPostgres(options.databaseUrl, options);
  return (await import('./pglite.js')).openPglite(options.dataDir ?? 'memory://');
}
