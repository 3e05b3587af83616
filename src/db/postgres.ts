/** A PostgreSQL server through `pg`: a pool for queries, a dedicated connection per LISTEN. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { DATABASE_LOCK_TIMEOUT_MS, DATABASE_STATEMENT_TIMEOUT_MS } from '../config-defaults.js';
import {
  type Database,
  type DatabaseOptions,
  type Db,
  isDatabaseUnavailable,
  type ListenHandlers,
  MIGRATIONS_FOLDER,
} from './database-core.js';
import * as schema from './schema.js';

/** The LISTEN connections' `application_name`: they can be told apart in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = 'feegate-listen';

/** A connection quiet this long gets its first TCP keepalive probe. */
const KEEPALIVE_IDLE_MS = 10_000;
/** A request that cannot get a connection within this time answers 503. */
const CONNECT_TIMEOUT_MS = 3000;
/** PostgreSQL ends a session left idle inside a transaction after this long, releasing its locks. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/**
 * The client's own deadline comes this long after the statement timeout: a
 * server that answers cancels the statement itself first (the connection stays
 * sound), so the deadline only ever catches a server that does not answer.
 */
const CLIENT_DEADLINE_MARGIN_MS = 1000;
/** How often a starting instance asks whether another has finished migrating. */
const MIGRATION_LOCK_POLL_MS = 200;

// Serialises migrations of several instances starting at once on one server.
const MIGRATION_LOCK_ID = 7_331_001;

/**
 * A checked-out client as a transaction's drizzle sees it. A query past its
 * deadline leaves the connection mid-query, so the ROLLBACK drizzle sends next
 * would wait behind it for a deadline of its own: the connection is ended at
 * once instead (end() destroys a socket with a query in flight), the ROLLBACK
 * fails at once, and the transaction gives its client back destroyed.
 */
class DeadlineGuard {
  constructor(private readonly client: pg.PoolClient) {}

  query(config: pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> {
    return this.client.query(config, values).catch((err: unknown) => {
      // pg's `query_timeout`: the server kept silent past the deadline.
      if (err instanceof Error && err.message === 'Query read timeout') this.client.end().catch(() => {});
      throw err;
    });
  }
}

export async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const statementTimeoutMs = options.statementTimeoutMs ?? DATABASE_STATEMENT_TIMEOUT_MS;
  // Every connection, pooled and LISTEN alike, is bounded: nothing holds one for ever.
  const connection: pg.ClientConfig = {
    connectionString: url,
    application_name: 'feegate',
    // Fail fast when the server is away, so callers get a 503 instead of hanging.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // The kernel probes a quiet connection, so a peer that vanished is found out
    // even when nothing is being sent (libpq's keepalives; off by default in pg).
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    // Sent in the startup message, so they cost no round trip.
    statement_timeout: statementTimeoutMs,
    lock_timeout: options.lockTimeoutMs ?? DATABASE_LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    // A statement_timeout cannot fire on a server that does not answer at all
    // (a hang, a path that swallows bytes): the client gives up a little later.
    // The pool destroys a client whose query failed so (pool.query releases it
    // with the error; transactions below do the same), never reusing it.
    query_timeout: statementTimeoutMs + CLIENT_DEADLINE_MARGIN_MS,
  };
  const pool = new pg.Pool({
    ...connection,
    max: options.poolSize ?? 10,
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
      return await (drizzlePg(new DeadlineGuard(client) as unknown as pg.PoolClient) as unknown as Db).transaction(
        work,
        config,
      );
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
      // /ready answers within seconds even when a pooled connection is dead but not yet known to be.
      // pg reads a query's own query_timeout; its types do not declare it.
      await pool.query({ text: 'select 1', query_timeout: CONNECT_TIMEOUT_MS } as pg.QueryConfig);
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async migrate() {
      const client = await pool.connect();
      try {
        // Asked in turns, not waited for in pg_advisory_lock: lock_timeout would end
        // that wait while another instance's migrations take longer.
        while (
          !(await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [MIGRATION_LOCK_ID])).rows[0]
            ?.ok
        ) {
          await sleep(MIGRATION_LOCK_POLL_MS);
        }
        await migratePg(drizzlePg(client), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
        client.release();
      }
    },
    async listen(channel, handlers) {
      const listener = pgListener(
        { ...connection, application_name: LISTEN_APPLICATION_NAME },
        channel,
        handlers,
        options.onError,
      );
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

/**
 * The heartbeat of a LISTEN connection. A connection that dies without a reset
 * (a NAT or firewall forgot it, the host vanished) raises no error and no end:
 * it only stops delivering. So the connection sends itself a notice every 2 s on
 * a channel of its own, and one that has not come back within 3 s counts as
 * lost, like an error: memory stops being trusted, and a new connection is
 * made. Together that bounds the time a missed notice can go unnoticed to 5 s.
 * The verdict is taken 100 ms early, so that a late timer cannot push it past
 * 3 s, and only after the I/O that has already arrived is read (setImmediate),
 * so that an event loop busy past the deadline does not call a live connection
 * dead.
 */
const HEARTBEAT_INTERVAL_MS = 2000;
const HEARTBEAT_DEADLINE_MS = 3000 - 100;
/** How long a lost LISTEN connection waits before the next attempt. */
const RECONNECT_DELAY_MS = 500;

/** A dedicated LISTEN connection that proves itself alive and reconnects by itself. */
function pgListener(
  config: pg.ClientConfig,
  channel: string,
  handlers: ListenHandlers,
  onError?: (err: Error) => void,
) {
  // Channel names are identifiers of at most 63 characters: 18 + 32 here.
  const heartbeatChannel = `feegate_heartbeat_${randomUUID().replaceAll('-', '')}`;
  let stopped = false;
  let current: Link | undefined;
  let retry: NodeJS.Timeout | undefined;

  interface Link {
    client: pg.Client;
    sent: number;
    received: number;
    beating?: NodeJS.Timeout;
    over?: boolean;
  }

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const link: Link = { client: new pg.Client(config), sent: 0, received: 0 };
    current = link;
    link.client.on('notification', (msg) => {
      if (msg.channel === heartbeatChannel) link.received = Math.max(link.received, Number(msg.payload));
      else handlers.onMessage(msg.payload ?? '');
    });
    link.client.on('error', (err) => {
      onError?.(err);
      lost(link);
    });
    link.client.on('end', () => lost(link));
    try {
      await link.client.connect();
      await link.client.query(
        `LISTEN ${pg.escapeIdentifier(channel)}; LISTEN ${pg.escapeIdentifier(heartbeatChannel)}`,
      );
      if (link.over) return;
      if (stopped) {
        lost(link);
        return;
      }
      link.beating = setInterval(() => beat(link), HEARTBEAT_INTERVAL_MS);
      link.beating.unref();
      handlers.onConnectedChange?.(true);
    } catch (err) {
      onError?.(err as Error);
      lost(link);
    }
  };

  const beat = (link: Link) => {
    const n = ++link.sent;
    // A send that fails or hangs shows as a missing notice; the connection's own 'error' tells the rest.
    link.client.query(`NOTIFY ${pg.escapeIdentifier(heartbeatChannel)}, '${n}'`).catch(() => {});
    setTimeout(() => {
      setImmediate(() => {
        if (link.received >= n || link.over) return;
        onError?.(
          new Error(
            `no heartbeat on the LISTEN connection of ${channel} within ${HEARTBEAT_DEADLINE_MS} ms; reconnecting`,
          ),
        );
        lost(link);
      });
    }, HEARTBEAT_DEADLINE_MS).unref();
  };

  /** Ends a connection once; if it was the current one, says so and schedules the next. */
  const lost = (link: Link) => {
    if (link.over) return;
    link.over = true;
    clearInterval(link.beating);
    // end() destroys the socket when a query is in flight (a swallowed heartbeat): no goodbye is waited for.
    link.client.end().catch(() => {});
    if (current !== link) return;
    current = undefined;
    handlers.onConnectedChange?.(false);
    if (!stopped && !retry) {
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, RECONNECT_DELAY_MS);
      retry.unref();
    }
  };

  const started = connect();
  return {
    started,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      const link = current;
      current = undefined;
      if (link && !link.over) {
        link.over = true;
        clearInterval(link.beating);
        await link.client.end().catch(() => {});
      }
    },
  };
}
