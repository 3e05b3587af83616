/**
 * The embedded default: PGlite, PostgreSQL compiled to WebAssembly, in a worker
 * thread of this process (pglite-rpc.ts, pglite-worker.mjs), so that its SQL
 * never holds the event loop.
 */
import { tracingOn } from '../lib/tracing.js';
import { withStatementSpans } from './pglite-spans.js';
import { mkdirSync, readFileSync } from 'node:fs';
import type { PGlite, QueryOptions, Results, Transaction } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { holdingDataDir } from './data-dir-lock.js';
import { type Database, type Db, findInPackage, MIGRATIONS_FOLDER } from './database-core.js';
import { PgliteWorkerClient } from './pglite-rpc.js';
import * as schema from './schema.js';

/**
 * PostgreSQL's default of 128MB lives in the service's own memory when the
 * database is embedded, and the data files are in the OS page cache anyway: a
 * small buffer pool saves that memory at no cost in throughput
 * (docs/performance.md).
 */
export const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'];

/** The installed PGlite build: a data directory made by another build is not loaded. */
export const PGLITE_VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')), 'utf8'),
).version;

/** Where a new data directory comes from (pglite-worker.mjs says why); made by scripts/pglite-template.ts. */
export const PGLITE_TEMPLATE = `assets/pglite-initdb-${PGLITE_VERSION}.tar.br`;

/** What pgliteDatabase needs of a client: PGlite itself (tests) or the worker's (the service). */
export interface PgliteClient {
  readonly closed: boolean;
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export async function openPglite(dataDir: string): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  return holdingDataDir(dataDir, async () => pgliteDatabase(await startPgliteWorker(dataDir)));
}

/** PGlite in its worker thread, on `dataDir`; a new directory is created from `loadDataDir` when given, else by initdb. */
export function startPgliteWorker(dataDir: string, loadDataDir?: Uint8Array): Promise<PgliteWorkerClient> {
  return PgliteWorkerClient.start({
    dataDir,
    startParams: PGLITE_SETTINGS,
    initDbStartParams: PGLITE_SETTINGS,
    loadDataDir,
    templatePath: findInPackage(PGLITE_TEMPLATE),
  });
}

/** A Database over a PGlite client made elsewhere (tests start from a migrated snapshot). */
export function pgliteDatabase(client: PgliteClient): Database {
  // Drizzle's pglite driver calls only query() and transaction() of its client.
  const drizzleClient = client as unknown as PGlite;
  const db = drizzlePglite(tracingOn() ? withStatementSpans(drizzleClient) : drizzleClient, {
    schema,
  }) as unknown as Db;
  return {
    driver: 'pglite',
    db,
    async ping() {
      await client.query('select 1');
    },
    async migrate() {
      await migratePglite(drizzlePglite(drizzleClient), { migrationsFolder: MIGRATIONS_FOLDER });
    },
    async listen(channel, handlers) {
      const unsubscribe = await client.listen(channel, handlers.onMessage);
      handlers.onConnectedChange?.(true);
      return unsubscribe;
    },
    async close() {
      if (!client.closed) await client.close();
    },
  };
}
