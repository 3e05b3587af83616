/**
 * What the command line prints when a command fails: one line for a person, never
 * SQL, a driver's query text or a stack. Database refusals are read by SQLSTATE.
 */
import { isDatabaseUnavailable, sqlState } from './db/database.js';
import { AppError, ConfigError, DataDirLockedError, ImportError, UsageError } from './errors.js';

/** The innermost error carrying PostgreSQL's fields (Drizzle wraps it as `cause`). */
function databaseError(err: unknown): { detail?: string; constraint?: string; message?: string } | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))
      return e as { detail?: string; constraint?: string; message?: string };
  }
  return undefined;
}

/** 'Key (customer_id)=(c0…) is not present in table "customers".' → its columns, values and table. */
function keyOf(detail: string | undefined): { columns: string; values: string; table?: string } | undefined {
  const match = /Key \((.+?)\)=\((.*?)\)(?: is not present in table "(\w+)")?/.exec(detail ?? '');
  return match ? { columns: match[1]!, values: match[2]!, ...(match[3] ? { table: match[3] } : {}) } : undefined;
}

function describeDatabaseRefusal(err: unknown): string | undefined {
  const state = sqlState(err);
  if (!state) return undefined;
  const db = databaseError(err);
  const key = keyOf(db?.detail);
  switch (state) {
    case '23503': // foreign_key_violation
      return key?.table
        ? `no ${key.table.replace(/s$/, '').replace('_', ' ')} with ${key.columns} ${key.values}; nothing was written`
        : 'it refers to a customer, merchant or plan that does not exist; nothing was written';
    case '23505': // unique_violation
      return `${key ? `${key.columns} ${key.values}` : 'a value that must be unique'} already exists; nothing was written`;
    case '23502': // not_null_violation
    case '23514': // check_violation
      return `a value breaks the rule ${db?.constraint ?? 'of the database'}; nothing was written`;
  }
  if (state.startsWith('22'))
    return `a value is not valid (${db?.message?.split('\n')[0] ?? state}); nothing was written`;
  return `the database refused the operation (SQLSTATE ${state}); nothing was written`;
}

/** Limits the database enforced, named by the setting that sets them. */
const TIMED_OUT: Record<string, string> = {
  '57014': 'a statement ran longer than DATABASE_STATEMENT_TIMEOUT_MS and was cancelled; nothing was written',
  '55P03':
    'waited longer than DATABASE_LOCK_TIMEOUT_MS for a lock another change holds; nothing was written, try again',
};

/** One line, without the "feegate: " prefix. */
export function describeError(err: unknown): string {
  if (err instanceof UsageError || err instanceof DataDirLockedError) return err.message;
  if (err instanceof ConfigError) return `configuration error: ${err.message}`;
  if (err instanceof AppError) return `${err.code}: ${err.detail}`;
  if (err instanceof ImportError) return `import refused, nothing written: ${err.message}`;
  const timedOut = TIMED_OUT[sqlState(err) ?? ''];
  if (timedOut) return timedOut;
  if (isDatabaseUnavailable(err)) return 'cannot reach the database; check DATABASE_URL and that the server runs';
  const refusal = describeDatabaseRefusal(err);
  if (refusal) return refusal;
  const message = err instanceof Error ? err.message : String(err);
  // A driver error without a SQLSTATE still carries the query in its message.
  if (/Failed query|\b(select|insert|update|delete)\b .*\b(from|into|set)\b/i.test(message))
    return 'the database operation failed; nothing was written';
  return message.split('\n')[0] || 'unexpected error';
}
