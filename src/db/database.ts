/**
 * One interface over both drivers: `pg` for a PostgreSQL server (postgres.ts),
 * PGlite for the embedded default (pglite.ts). Everything above src/db sees only
 * `Database` and the helpers of database-core.ts.
 */
import type { Database, DatabaseOptions } from './database-core.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export * from './database-core.js';
export { pgliteDatabase } from './pglite.js';

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPglite(options.dataDir ?? 'memory://');
}
