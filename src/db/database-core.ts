/**
 * What both drivers offer (`Database`), and what code above them needs to know
 * about any database: its migrations and how to read its errors.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { type PgDatabase, PgDialect, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface ListenHandlers {
  onMessage(payload: string): void;
  /** false while the listening connection is down: pushed messages may be missed. */
  onConnectedChange?(connected: boolean): void;
}

export interface Database {
  readonly driver: 'postgres' | 'pglite';
  readonly db: Db;
  ping(): Promise<void>;
  migrate(): Promise<void>;
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** Connections of a pooled driver (a metric); absent for the embedded one. */
  poolStats?(): { total: number; idle: number; waiting: number };
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** PGlite data directory; 'memory://' for a throw-away database. */
  dataDir?: string;
  poolSize?: number;
  /** PostgreSQL: statement_timeout of every connection (default DATABASE_STATEMENT_TIMEOUT_MS of config.ts); the client's deadline is a second later. */
  statementTimeoutMs?: number;
  /** PostgreSQL: lock_timeout of every connection (default DATABASE_LOCK_TIMEOUT_MS). */
  lockTimeoutMs?: number;
  onError?(err: Error): void;
}

/** A path inside the package, found upwards from this module: from src/db/ as from the bundle in dist/. */
export function findInPackage(relative: string): string | undefined {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, relative))) return path.join(dir, relative);
    if (path.dirname(dir) === dir) return undefined;
  }
}

function findMigrationsFolder(): string {
  const journal = findInPackage(path.join('migrations', 'meta', '_journal.json'));
  if (!journal) throw new Error('migrations/ not found above the feegate sources');
  return path.dirname(path.dirname(journal));
}

export const MIGRATIONS_FOLDER = findMigrationsFolder();

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '57014', // query_canceled: statement_timeout, the server answering too slowly
  '55P03', // lock_not_available: lock_timeout
]);

/** True when an error means "the database cannot be reached or did not answer in time", not "the query is wrong". */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
    const message = typeof e.message === 'string' ? e.message : '';
    if (
      /Connection terminated|timeout exceeded when trying to connect|PGlite is closed|Client has encountered a connection error|Query read timeout|Client was closed and is not queryable/i.test(
        message,
      )
    )
      return true;
  }
  return false;
}

/** The PostgreSQL error code (SQLSTATE) of an error, looking through Drizzle's wrapper. */
export function sqlState(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}

export { sql };

/**
 * A fragment without values printed to SQL text once: a hot statement's long
 * column list then costs one chunk per query instead of Drizzle's walk over every
 * column (a tenth of the listing's CPU when each page is a hundred queries).
 */
export function precompiled(fragment: SQL): SQL {
  const { sql: text, params } = new PgDialect().sqlToQuery(fragment);
  if (params.length > 0) throw new Error('precompiled: the fragment must hold no values');
  return sql.raw(text);
}

/** Rows of a raw SQL statement; both drivers answer with `{ rows }`. */
export async function queryRows<T>(tx: Db, query: SQL): Promise<T[]> {
  const result = (await tx.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

/** An instant as PostgreSQL prints it for the API: ISO 8601, UTC, milliseconds (rows read raw need no Date). */
export const isoUtc = (column: SQLWrapper) =>
  sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
