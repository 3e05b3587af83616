/**
 * zxcvbn's judgement of a password, made in a worker thread
 * (password-strength-worker.mjs): a request never holds the event loop while
 * it is measured (contract section 19). One thread for the process, started at
 * the first check (most processes never check a password), holding the loop
 * open only while a check is under way.
 */
import { Worker } from 'node:worker_threads';

export interface Strength {
  /** zxcvbn's score, 0..4. */
  score: number;
  /** The longest part found in the common-password list (0: none). */
  commonLength: number;
}

const WORKER_URL = new URL('./password-strength-worker.mjs', import.meta.url);

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, { resolve(s: Strength): void; reject(err: Error): void }>();

function failAll(err: Error): void {
  worker = undefined;
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

function started(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_URL);
  w.on('message', (msg: { id: number; result?: Strength; error?: string }) => {
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (pending.size === 0) w.unref();
    if (msg.error !== undefined) p?.reject(new Error(msg.error));
    else p?.resolve(msg.result!);
  });
  // A thread that dies fails its checks; the next check starts another.
  w.on('error', failAll);
  w.on('exit', () => {
    if (worker === w) failAll(new Error('password strength worker exited'));
  });
  worker = w;
  return w;
}

/**
 * Measures `password` (already bounded by the caller) against zxcvbn's lists and
 * `userInputs`. Unbounded queue on purpose: every caller has passed a costlier
 * check first (a token and the current password, a challenge session, a right
 * reset code), so nobody can queue checks faster than those let through.
 */
export function measureStrength(password: string, userInputs: string[]): Promise<Strength> {
  const w = started();
  const id = nextId++;
  return new Promise<Strength>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, password, userInputs });
  });
}
