/**
 * A counting semaphore: at most `count` holders at once, the others waiting in
 * the order they asked. A waiter whose signal aborts leaves the queue at once,
 * so a client that hung up never takes a permit.
 */
export interface Permits {
  /** Resolves with the permit's release (calling it twice releases once); rejects with the signal's reason if it aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** How many are waiting now (for tests and metrics). */
  waiting(): number;
}

export function createPermits(count: number): Permits {
  let free = count;
  const queue: Array<() => void> = [];

  const handOn = () => {
    const next = queue.shift();
    if (next) next();
    else free++;
  };
  const releaseOnce = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      handOn();
    };
  };

  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (free > 0) {
        free--;
        return Promise.resolve(releaseOnce());
      }
      return new Promise((resolve, reject) => {
        const abandon = () => {
          queue.splice(queue.indexOf(grant), 1);
          reject(signal?.reason);
        };
        const grant = () => {
          signal?.removeEventListener('abort', abandon);
          resolve(releaseOnce());
        };
        queue.push(grant);
        signal?.addEventListener('abort', abandon, { once: true });
      });
    },
    waiting: () => queue.length,
  };
}
