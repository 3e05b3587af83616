/**
 * A small pool of low-priority worker threads that run argon2 (see
 * argon2-worker.mjs). Jobs queue here; the login gate decides how many may wait.
 */
import { Worker } from 'node:worker_threads';

type Job = { op: 'hash'; password: string; options: object } | { op: 'verify'; phc: string; password: string };

interface Pending {
  job: Job;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

const WORKER_URL = new URL('./argon2-worker.mjs', import.meta.url);
/**
 * The worker's JavaScript only passes strings to argon2 (whose 19 MiB live outside
 * the JS heap), so a small V8 heap is enough; the default young generation alone
 * would let each worker grow by tens of MB.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 24 };

export interface Argon2PoolOptions {
  /** The share of a core each worker may use; it rests the remainder after each job (argon2-worker.mjs). */
  cpuPercent: number;
  /** Whether each worker lowers itself to the lowest CPU priority (argon2-worker.mjs). */
  idlePriority: boolean;
  /** Told after each rest: how long the job ran and how long the worker then rested. */
  onRest?(busyMs: number, restedMs: number): void;
}

export function createArgon2Pool(size: number, options: Argon2PoolOptions = { cpuPercent: 100, idlePriority: true }) {
  const idle: Worker[] = [];
  const busy = new Map<Worker, Pending>();
  const queue: Pending[] = [];
  let workers = 0;
  let closed = false;
  let nextId = 0;

  function spawn(): Worker {
    const worker = new Worker(WORKER_URL, {
      resourceLimits: WORKER_LIMITS,
      workerData: {
        cpuPercent: options.cpuPercent,
        idlePriority: options.idlePriority,
        reportRests: options.onRest !== undefined,
      },
    });
    worker.unref();
    workers++;
    worker.on('message', (msg: { result?: unknown; error?: string; rest?: { busyMs: number; restedMs: number } }) => {
      if (msg.rest) {
        options.onRest?.(msg.rest.busyMs, msg.rest.restedMs);
        return;
      }
      const pending = busy.get(worker);
      busy.delete(worker);
      if (pending) {
        if (msg.error !== undefined) pending.reject(new Error(msg.error));
        else pending.resolve(msg.result);
      }
      release(worker);
    });
    worker.on('error', (err) => fail(worker, err));
    worker.on('exit', () => fail(worker, new Error('argon2 worker exited')));
    return worker;
  }

  const dead = new WeakSet<Worker>();
  /** A worker that errs or exits is replaced on the next job; its job fails. */
  function fail(worker: Worker, err: Error) {
    if (dead.has(worker)) return;
    dead.add(worker);
    workers--;
    const pending = busy.get(worker);
    busy.delete(worker);
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
    pending?.reject(err);
    pump();
  }

  function release(worker: Worker) {
    idle.push(worker);
    pump();
  }

  function pump() {
    while (queue.length > 0 && !closed) {
      const worker = idle.pop() ?? (workers < size ? spawn() : undefined);
      if (!worker) return;
      const pending = queue.shift()!;
      busy.set(worker, pending);
      worker.postMessage({ id: nextId++, ...pending.job });
    }
  }

  function run<T>(job: Job): Promise<T> {
    if (closed) return Promise.reject(new Error('argon2 pool is closed'));
    return new Promise<T>((resolve, reject) => {
      queue.push({ job, resolve: resolve as (v: unknown) => void, reject });
      pump();
    });
  }

  return {
    hash: (password: string, options: object) => run<string>({ op: 'hash', password, options }),
    verify: (phc: string, password: string) => run<boolean>({ op: 'verify', phc, password }),
    async close(): Promise<void> {
      closed = true;
      const all = [...idle, ...busy.keys()];
      idle.length = 0;
      for (const pending of [...busy.values(), ...queue]) pending.reject(new Error('argon2 pool is closed'));
      busy.clear();
      queue.length = 0;
      for (const w of all) dead.add(w);
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}
