/** A PostgreSQL server through `pg`: a pool for queries, a dedicated connection per LISTEN. */
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { type Database, type DatabaseOptions, type Db, isDatabaseUnavailable, type ListenHandlers, MIGRATIONS_FOLDER } from './driver.js';
import * as schema from './schema.js';

// Serialises migrations of several instances starting at once on one server.
const MIGRATION_LOCK_ID = 7_331_001;

export async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Fail fast when the server is away, so callers get a 503 instead of hanging.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
  });
  // A client losing its server emits 'error'; with no listener that ends the
  // process. The pool listens only while a client is idle, so every client gets
  // its own listener for the time it is checked out (inside a transaction,
  // mid-query): the query in flight rejects, the request answers 503, and on
  // release the pool drops the dead client instead of reusing it.
  pool.on('connect', (client) => client.on('error', (err) => options.onError?.(err)));
  pool.on('error', (err) => options.onError?.(err));
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  // drizzle's own pool transaction sends BEGIN before its try/finally: a
  // connection lost at that moment never gave its client back, so the pool
  // shrank for good and pool.end() waited for ever. Each transaction runs on a
  // client checked out here and always released (destroyed when it is dead).
  // Its drizzle instance gets no `schema`: that only serves relational queries
  // (`db.query.*`, unused here), and extracting it walks every table: a twentieth
  // of a login's event-loop time when done for each transaction.
  db.transaction = async (work, config) => {
    const client = await pool.connect();
    let failure: unknown;
    try {
      return await (drizzlePg(client) as unknown as Db).transaction(work, config);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      client.release(isDatabaseUnavailable(failure) ? (failure as Error) : undefined);
    }
  };
  const listeners = new Set<ReturnType<typeof pgListener>>();
  return {
    driver: 'postgres',
    db,
    async ping() {
      await pool.query('select 1');
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async migrate() {
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        await migratePg(drizzlePg(client), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
        client.release();
      }
    },
    async listen(channel, handlers) {
      const listener = pgListener(url, channel, handlers, options.onError);
      listeners.add(listener);
      await listener.started;
      return async () => {
        listeners.delete(listener);
        await listener.stop();
      };
    },
    async close() {
      await Promise.all([...listeners].map((l) => l.stop()));
      await pool.end();
    },
  };
}

/** A dedicated LISTEN connection that reconnects by itself. */
function pgListener(url: string, channel: string, handlers: ListenHandlers, onError?: (err: Error) => void) {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    next.on('notification', (msg) => handlers.onMessage(msg.payload ?? ''));
    next.on('error', (err) => {
      onError?.(err);
      lost(next);
    });
    next.on('end', () => lost(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (stopped) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
      handlers.onConnectedChange?.(true);
    } catch (err) {
      onError?.(err as Error);
      lost(next);
    }
  };

  const lost = (which: pg.Client) => {
    if (client === which) client = undefined;
    handlers.onConnectedChange?.(false);
    which.end().catch(() => {});
    if (!stopped && !retry) {
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, 500);
      retry.unref();
    }
  };

  const started = connect();
  return {
    started,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}

