/**
 * The database as reads on the pool see it (docs/design.md, "Reads on the pool,
 * writes in a unit of work"): every statement, built by Drizzle or written as
 * SQL, passes through the session's prepareQuery, and one that could change
 * data or take a lock is refused before it is sent, in tests and in
 * production. Writes run in a unit of work, on the database itself; opening a
 * transaction here is refused too, so no read can open a write path of its own.
 */
import type { Db } from './database-core.js';

/** What a statement read on the pool may start with. */
const READ_START = /^(select|with|values)\b/;

/**
 * Words that change data, lock rows or have effects beyond the statement, in a
 * statement's text once its literals, quoted identifiers and comments are gone
 * (values travel as parameters, so only the statement's own words remain).
 */
const NOT_A_READ =
  /\b(insert|update|delete|merge|truncate|into|nextval|setval|pg_notify|set_config|pg_(try_)?advisory_\w+|lo_\w+)\b|\bfor\s+(key\s+)?share\b|;\s*\S/;

/** Literals, quoted identifiers and comments, which may hold any word without being one. */
const QUOTED = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\w*)\$[\s\S]*?\$\1\$|--[^\n]*|\/\*[\s\S]*?\*\//g;

/** Whether `statement` only reads: it starts as a query does and holds no word that writes or locks. */
export function isReadOnlyStatement(statement: string): boolean {
  const words = statement.replace(QUOTED, ' ').trim().toLowerCase();
  return READ_START.test(words) && !NOT_A_READ.test(words);
}

/** Raised for a write reached outside the unit of work: a mistake in the code, never in the request. */
export class WriteOutsideUnitOfWork extends Error {
  constructor(what: string) {
    super(`a write outside the unit of work was refused (docs/design.md, "One write path"): ${what}`);
    this.name = 'WriteOutsideUnitOfWork';
  }
}

/** Verdicts by statement text: Drizzle builds the same few hundred texts over and over. */
const VERDICTS_KEPT = 2_000;

type Session = Db['_']['session'];

/** `db` for reads only: the same pool and dialect, a session that sends nothing but reads and opens no transaction. */
export function readOnly(db: Db): Db {
  const verdicts = new Map<string, boolean>();
  const isRead = (statement: string) => {
    let verdict = verdicts.get(statement);
    if (verdict === undefined) {
      verdict = isReadOnlyStatement(statement);
      if (verdicts.size >= VERDICTS_KEPT) verdicts.clear();
      verdicts.set(statement, verdict);
    }
    return verdict;
  };
  const inner = db._.session;
  const refuseTransaction = () => Promise.reject(new WriteOutsideUnitOfWork('a transaction opened on the pool'));
  // Inherited methods (execute, all, count) call this.prepareQuery, so they meet the check too.
  const session: Session = Object.create(inner, {
    prepareQuery: {
      value(query: { sql: string }, ...rest: unknown[]) {
        if (!isRead(query.sql)) throw new WriteOutsideUnitOfWork(query.sql.slice(0, 200));
        return (inner.prepareQuery as (...args: unknown[]) => unknown).call(session, query, ...rest);
      },
    },
    transaction: { value: refuseTransaction },
  });
  // Builders take `this.session`; relational queries (unused) and the raw client would bypass it, so they are gone.
  return Object.create(db, {
    session: { value: session },
    _: { value: { ...db._, session } },
    query: { value: {} },
    $client: { value: undefined },
    transaction: { value: refuseTransaction },
  }) as Db;
}
