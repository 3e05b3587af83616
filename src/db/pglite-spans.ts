/**
 * Statement spans for the embedded driver, which no instrumentation knows: each
 * query() of PGlite (and of its transactions) in a span named as instrumentation-pg
 * names its own, with the statement text and never its values (src/lib/tracing.ts;
 * nothing while tracing is off).
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { inSpan } from '../lib/tracing.js';

type Queryable = Pick<PGlite, 'query'>;

/** The first keyword of the statement: SELECT, INSERT, WITH… */
const operationOf = (text: string): string => /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';

function tracedQuery<T extends Queryable>(target: T): T['query'] {
  return ((text: string, params?: unknown[], options?: object) =>
    inSpan(
      `pg.query:${operationOf(text)}`,
      { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.query.text': text, 'db.statement': text },
      () => target.query(text, params, options),
    )) as T['query'];
}

/** `client` with each statement in a span; the rest of it as it is. */
export function withStatementSpans<C extends Queryable & Pick<PGlite, 'transaction'>>(client: C): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'query') return tracedQuery(target);
      if (property === 'transaction')
        return <R>(work: (tx: Transaction) => Promise<R>) =>
          target.transaction((tx) =>
            work(new Proxy(tx, { get: (t, p) => (p === 'query' ? tracedQuery(t) : Reflect.get(t, p)) })),
          );
      return Reflect.get(target, property, receiver);
    },
  });
}
