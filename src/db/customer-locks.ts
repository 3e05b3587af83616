/**
 * Writes that take a customer's assignment lock (bulk assignment, /all, the
 * import) wait for it without holding a pool connection, so one customer's
 * queue can never take the connections another customer's requests need.
 *
 * Waiting inside PostgreSQL (SELECT ... FOR NO KEY UPDATE) holds a connection
 * for the whole wait: ten assignments queued behind one customer's import took
 * a pool of ten, and every other customer got 503. And lock_timeout would end
 * such a wait after 5 s, failing an assignment queued behind a long /all.
 * So instead:
 * - On this instance, one customer's writes take their turns in memory: one at a
 *   time reaches the database, WAITING_PER_CUSTOMER more wait in order, and
 *   beyond that a write is refused at once (503 server_busy, Retry-After).
 * - The one whose turn it is tries the lock with NOWAIT. When another process
 *   holds it (an import, another instance), its transaction ends at once, giving
 *   its connection back, and it tries again after a pause that grows to half a
 *   second, so a held lock costs one short statement now and then.
 * - A write waits at most the statement timeout in all: the longest one
 *   statement of the holder may run. Then it answers 503 server_busy.
 * A lock held by this instance is handed to the next in memory as soon as it is
 * released; polling only ever waits for other processes.
 *
 * Fee plans, merchants (a change of status) and the import all take it, so it
 * lives here, knowing no feature: the statement that locks the customers' rows
 * is handed in by the composition root.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomerLockedError, ServiceUnavailableError } from '../errors.js';
import type { ChangeContext } from '../lib/change-context.js';
import type { UnitOfWork, WriteScope } from './unit-of-work.js';

/** Writes of one customer that may wait behind the one running, per instance. */
export const WAITING_PER_CUSTOMER = 8;
const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 500;
const RETRY_AFTER_SECONDS = 2;

export interface CustomerLocksDeps<D> {
  uow: UnitOfWork<D>;
  /**
   * Locks these customers' rows until the transaction ends without waiting
   * (CustomerLockedError when another holds one), and counts those that exist.
   */
  tryLock: (dal: D, customerIds: string[]) => Promise<number>;
  /** The longest a write waits for its turn and its lock together. */
  waitLimitMs: number;
}

const busy = () =>
  new ServiceUnavailableError(
    'server_busy',
    "Other changes of this customer's plan assignments are running or waiting; retry shortly.",
    RETRY_AFTER_SECONDS,
  );

export function createCustomerLocks<D>(deps: CustomerLocksDeps<D>) {
  const { uow, tryLock, waitLimitMs } = deps;
  /** Customers with a write running here → the writes waiting behind it, in order. */
  const lanes = new Map<string, Array<() => void>>();

  /** Waits for `customerId`'s turn on this instance; returns what ends it. */
  async function turn(customerId: string, deadline: number): Promise<() => void> {
    let waiting = lanes.get(customerId);
    if (!waiting) {
      waiting = [];
      lanes.set(customerId, waiting);
    } else {
      if (waiting.length >= WAITING_PER_CUSTOMER) throw busy();
      const queue = waiting;
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          queue.splice(queue.indexOf(go), 1);
          reject(busy());
        }, deadline - Date.now());
        queue.push(go);
      });
    }
    const queue = waiting;
    return () => {
      const next = queue.shift();
      if (next) next();
      else lanes.delete(customerId);
    };
  }

  /** Runs `work` in a unit of work holding the locks of `customerIds`, trying them until `deadline`. */
  async function holding<T>(
    customerIds: string[],
    deadline: number,
    context: ChangeContext,
    work: (scope: WriteScope<D>, found: number) => Promise<T>,
  ): Promise<T> {
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, LONGEST_PAUSE_MS)) {
      try {
        return await uow.write(context, async (scope) => work(scope, await tryLock(scope.dal, customerIds)));
      } catch (err) {
        if (!(err instanceof CustomerLockedError)) throw err;
      }
      if (Date.now() + pause > deadline) throw busy();
      await sleep(pause);
    }
  }

  return {
    /**
     * A write of one customer's assignments, in a transaction holding its lock;
     * `found` tells whether the customer exists. First the turn, then the lock,
     * then every read, so it sees the state left by the write before it.
     */
    async forCustomer<T>(
      customerId: string,
      context: ChangeContext,
      work: (scope: WriteScope<D>, found: boolean) => Promise<T>,
    ): Promise<T> {
      const deadline = Date.now() + waitLimitMs;
      const done = await turn(customerId, deadline);
      try {
        return await holding([customerId], deadline, context, (scope, found) => work(scope, found === 1));
      } finally {
        done();
      }
    },

    /**
     * The import: the locks of several customers at once (in id order, so two
     * imports cannot deadlock), taken before anything is written. The command
     * line runs it in a process of its own, so it waits for the locks only, not
     * for a turn in memory.
     */
    async forCustomers<T>(
      customerIds: string[],
      context: ChangeContext,
      work: (scope: WriteScope<D>) => Promise<T>,
    ): Promise<T> {
      return holding(customerIds, Date.now() + waitLimitMs, context, (scope) => work(scope));
    },
  };
}

export type CustomerLocks<D> = ReturnType<typeof createCustomerLocks<D>>;
