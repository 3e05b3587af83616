/**
 * Background work that the instances share through the database (scheduled
 * fee-rule changes, webhook deliveries): each `tick` claims what is due with
 * `FOR UPDATE SKIP LOCKED`, so several instances never take the same row. The
 * loop runs a tick when woken (a NOTIFY after a commit, for promptness) and
 * every `intervalMs` anyway (a notice missed while the connection was down, a
 * due instant reached). Ticks never overlap in one process; a tick that did
 * something is followed by another at once, so that a backlog drains without
 * waiting for the interval.
 */
import type { Log } from './log.js';

export interface BackgroundWorker {
  start(): void;
  /** Asks for a tick as soon as the current one (if any) ends. */
  wake(): void;
  /** Stops the loop and waits for the tick under way. */
  stop(): Promise<void>;
}

export interface BackgroundWorkerOptions {
  name: string;
  intervalMs: number;
  /** Does one batch of due work; true when it found some (another tick follows at once). */
  tick: () => Promise<boolean>;
  log: Log;
}

export function createBackgroundWorker({ name, intervalMs, tick, log }: BackgroundWorkerOptions): BackgroundWorker {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;

  async function loop(): Promise<void> {
    do {
      again = false;
      try {
        if (await tick()) again = true;
      } catch (err) {
        // A failed tick (the database away) is retried at the next interval: the work stays in its table.
        log.warn({ err, worker: name }, 'background work failed; it is retried');
      }
    } while (again && !stopped);
    running = undefined;
  }

  function wake(): void {
    if (stopped) return;
    if (running) again = true;
    else running = loop();
  }

  return {
    start() {
      stopped = false;
      timer = setInterval(wake, intervalMs);
      timer.unref();
      wake();
    },
    wake,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
