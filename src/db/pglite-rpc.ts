/**
 * The main thread's side of the embedded database: a PGlite-shaped client
 * (`query`, `exec`, `transaction`, `listen`, `close`, what Drizzle's pglite
 * driver and pglite.ts call) whose SQL runs in pglite-worker.mjs.
 *
 * Our own small RPC over node:worker_threads because PGlite's worker mode
 * (`@electric-sql/pglite/worker`) is built for browser tabs: it elects a leader
 * with `navigator.locks` (absent before Node 24) and talks over
 * `BroadcastChannel` and the Web `Worker` API.
 */
import { Worker } from 'node:worker_threads';
import type { QueryOptions, Results, Transaction } from '@electric-sql/pglite';

const WORKER_URL = new URL('./pglite-worker.mjs', import.meta.url);

type Parser = (value: string, typeId: number) => unknown;

export interface PgliteWorkerOptions {
  dataDir: string;
  /** PostgreSQL settings as `-c name=value` pairs, added to PGlite's own. */
  startParams: string[];
  /** The same for initdb, when the directory is new. */
  initDbStartParams?: string[];
  /** A data directory archive (PGlite's `dumpDataDir`) to start from. */
  loadDataDir?: Uint8Array;
  /** A new directory's initdb result, as a Brotli-compressed archive (scripts/pglite-template.ts). */
  templatePath?: string;
}

interface Reply {
  id?: number;
  result?: unknown;
  error?: Record<string, unknown> & { message: string };
  notification?: number;
  payload?: string;
}

/** An error from the worker, with PostgreSQL's fields (`code` = SQLSTATE, `constraint`...) as PGlite set them. */
function revive(error: Reply['error']): Error {
  const { message, stack, name, ...fields } = error ?? { message: 'unknown error in the database worker' };
  const err = Object.assign(new Error(message as string), fields);
  if (typeof stack === 'string')
    err.stack = `${err.stack}\n    --- in the database worker ---\n${stack.split('\n').slice(1).join('\n')}`;
  return err;
}

/** Applies the caller's parsers on this thread: functions cannot cross to the worker. */
function parseRows<T>(result: Results<T>, parsers: Record<number, Parser>, rowMode: 'array' | 'object'): Results<T> {
  const columns = result.fields.flatMap((field, index) => {
    const parse = parsers[field.dataTypeID];
    return parse ? [{ index, name: field.name, type: field.dataTypeID, parse }] : [];
  });
  if (!columns.length) return result;
  for (const row of result.rows as Array<Record<string | number, unknown>>) {
    for (const column of columns) {
      const key = rowMode === 'array' ? column.index : column.name;
      const value = row[key];
      if (value !== null && value !== undefined) row[key] = column.parse(value as string, column.type);
    }
  }
  return result;
}

export class PgliteWorkerClient {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #nextId = 1;
  #closed = false;
  #stopped: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the worker and resolves once PGlite is open in it (initdb included, for a new directory). */
  static async start(options: PgliteWorkerOptions): Promise<PgliteWorkerClient> {
    // No TypeScript loader in the worker: it is plain JavaScript, and tsx would cost it memory.
    const worker = new Worker(WORKER_URL, { workerData: options, execArgv: [] });
    const client = new PgliteWorkerClient(worker);
    const ready = new Promise((resolve, reject) => client.#pending.set(0, { resolve, reject }));
    worker.on('message', (reply: Reply) => client.#receive(reply));
    worker.on('error', (err) => client.#stop(err));
    worker.on('exit', (code) => client.#stop(new Error(`the embedded database worker exited with code ${code}`)));
    try {
      await ready;
    } catch (err) {
      await worker.terminate();
      throw err;
    }
    return client;
  }

  get closed(): boolean {
    return this.#closed;
  }

  #receive(reply: Reply): void {
    if (reply.notification !== undefined) {
      this.#listeners.get(reply.notification)?.(reply.payload ?? '');
      return;
    }
    const pending = this.#pending.get(reply.id!);
    this.#pending.delete(reply.id!);
    if (reply.error) pending?.reject(revive(reply.error));
    else pending?.resolve(reply.result);
  }

  /** The worker is gone: everything waiting fails as "database unavailable" (SQLSTATE 57P02, crash_shutdown). */
  #stop(cause: Error): void {
    if (this.#stopped) return;
    this.#stopped = this.#closed
      ? new Error('PGlite is closed')
      : Object.assign(new Error(`PGlite is closed: ${cause.message}`), { code: '57P02', cause });
    this.#closed = true;
    for (const pending of this.#pending.values()) pending.reject(this.#stopped);
    this.#pending.clear();
  }

  #call<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.#stopped || (this.#closed && op !== 'close'))
      return Promise.reject(this.#stopped ?? new Error('PGlite is closed'));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#worker.postMessage({ id, op, ...args });
    });
  }

  async #query<T>(sql: string, params: unknown[] = [], options: QueryOptions = {}, tx?: number): Promise<Results<T>> {
    if (options.serializers || options.blob || options.onNotice)
      throw new Error('the embedded database worker takes no serializers, blobs or notice callbacks');
    const parsers = (options.parsers ?? {}) as Record<number, Parser>;
    const rowMode = options.rowMode ?? 'object';
    const result = await this.#call<Results<T>>('query', {
      sql,
      params,
      rowMode,
      paramTypes: options.paramTypes,
      rawTypes: Object.keys(parsers).map(Number),
      tx,
    });
    return parseRows(result, parsers, rowMode);
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.#query<T>(sql, params, options);
  }

  exec(sql: string): Promise<Results[]> {
    return this.#call('exec', { sql });
  }

  /**
   * BEGIN in the worker, the callback here, then COMMIT, or ROLLBACK when it
   * throws. While it runs, every other query waits in the worker (PGlite's
   * transaction lock), so nothing interleaves inside it.
   */
  async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    const id = await this.#call<number>('begin');
    let closed = false;
    const open = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx: Transaction = {
      query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => {
        open();
        return this.#query<R>(sql, params, options, id);
      },
      sql: async () => {
        throw new Error('tx.sql is not offered by the embedded database worker; use tx.query');
      },
      exec: async (sql: string) => {
        open();
        return this.#call<Results[]>('exec', { sql, tx: id });
      },
      rollback: async () => {
        open();
        closed = true;
        await this.#call('rollback', { tx: id });
      },
      listen: async () => {
        throw new Error('LISTEN inside a transaction is not offered by the embedded database worker');
      },
      get closed() {
        return closed;
      },
    };
    try {
      const result = await callback(tx);
      if (!closed) {
        closed = true;
        await this.#call('commit', { tx: id });
      }
      return result;
    } catch (err) {
      if (!closed) {
        closed = true;
        await this.#call('rollback', { tx: id });
      }
      throw err;
    }
  }

  /** Notifications arrive once their transaction has committed, as PGlite delivers them. */
  async listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>> {
    // The id is chosen here, so that no notification can arrive before its callback is known.
    const listener = this.#nextId++;
    this.#listeners.set(listener, callback);
    try {
      await this.#call('listen', { channel, listener });
    } catch (err) {
      this.#listeners.delete(listener);
      throw err;
    }
    return async () => {
      this.#listeners.delete(listener);
      await this.#call('unlisten', { listener });
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#call('close');
    } finally {
      await this.#worker.terminate();
    }
  }
}
