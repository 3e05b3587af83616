/**
 * argon2id with the OWASP parameters. Hashing runs in low-priority worker
 * threads (argon2-pool.ts), so it never blocks or starves the event loop; the
 * gate below bounds how many verifications run and wait at once, so a login
 * storm is answered with 503 + Retry-After instead of slowing everything down.
 */
import { inSpan } from '../../lib/tracing.js';
import { ClientClosedRequestError, ServiceUnavailableError } from '../../errors.js';
import { type Argon2PoolOptions, createArgon2Pool } from './argon2-pool.js';
import { normalisePassword, passwordSpellings } from './password-text.js';

const ARGON2ID = 2; // Algorithm.Argon2id (an ambient const enum in the typings)
export const ARGON2_OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
/**
 * What an unknown or disabled user is verified against: a hash made with
 * ARGON2_OPTIONS (a test holds them equal), so a failure costs what a known
 * user's does; written out rather than made at the first login, which cost every
 * process (and every test's app) a hash.
 */
export const DUMMY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$ptfRIPUm3dxsQSltQuTiWA$1ProxXQeQcxpZehvwDer+JcR1lNgP9zRSp4EAL1YYII';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Whether `password` is the one `storedHash` was made from: for operator work (import), not gated as logins are. */
  matches(storedHash: string, password: string): Promise<boolean>;
  /**
   * Verifies against the hash `storedHash` gives, or against a dummy hash when it
   * gives null (an unknown user), so both take the same time. `storedHash` runs
   * only when the login's turn to hash has come: a storm's logins wait in the
   * queue without a database query each, and only one looks its user up at a time.
   * When `clientGone` aborts while the login waits for a slot, it leaves the queue with
   * ClientClosedRequestError: a storm's timed-out clients do not keep the hashing busy.
   */
  verify(storedHash: () => Promise<string | null>, password: string, clientGone?: AbortSignal): Promise<boolean>;
  /** Throws the same 503 as verify() would, without waiting: lets a full queue refuse before any work. */
  assertCapacity(): void;
  /** Logins waiting for a slot (a metric). */
  queued(): number;
  close(): Promise<void>;
}

export interface PasswordHasherOptions {
  concurrency: number;
  queueLimit: number;
  /** LOGIN_HASH_CPU_PERCENT: the share of a core each hashing thread uses under sustained load (default 100). */
  cpuPercent?: number;
  onRest?: Argon2PoolOptions['onRest'];
  /** LOGIN_HASH_IDLE_PRIORITY: the hashing threads run at SCHED_IDLE and nice 19 (default true). */
  idlePriority?: boolean;
}

export function createPasswordHasher(options: PasswordHasherOptions): PasswordHasher {
  const pool = createArgon2Pool(options.concurrency, {
    cpuPercent: options.cpuPercent ?? 100,
    idlePriority: options.idlePriority ?? true,
    ...(options.onRest ? { onRest: options.onRest } : {}),
  });
  let running = 0;
  const waiting: Array<() => void> = [];

  function assertCapacity(): void {
    if (running >= options.concurrency && waiting.length >= options.queueLimit) {
      throw new ServiceUnavailableError('server_busy', 'Too many logins at once; retry shortly.', 1);
    }
  }

  /** Waits for a free slot; leaves the queue at once if the client goes away meanwhile. */
  function slot(clientGone: AbortSignal | undefined): Promise<void> {
    if (running < options.concurrency) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        const at = waiting.indexOf(admit);
        if (at >= 0) waiting.splice(at, 1);
        reject(new ClientClosedRequestError());
      };
      const admit = () => {
        clientGone?.removeEventListener('abort', leave);
        resolve();
      };
      waiting.push(admit);
      clientGone?.addEventListener('abort', leave, { once: true });
    });
  }

  async function gated<T>(work: () => Promise<T>, clientGone: AbortSignal | undefined): Promise<T> {
    if (clientGone?.aborted) throw new ClientClosedRequestError();
    assertCapacity();
    await slot(clientGone);
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  }

  /** Whether any spelling of `password` made `phc`; a stored hash argon2 cannot read matches no password. */
  async function anySpelling(phc: string, password: string): Promise<boolean> {
    for (const spelling of passwordSpellings(password)) {
      if (await pool.verify(phc, spelling).catch(() => false)) return true;
    }
    return false;
  }

  return {
    // Hashing new passwords is operator work (import), not the login path: not gated.
    hash: (password) =>
      inSpan('password.hash', { 'feegate.password.algorithm': 'argon2id' }, () =>
        pool.hash(normalisePassword(password), ARGON2_OPTIONS),
      ),
    matches: anySpelling,
    async verify(storedHash, password, clientGone) {
      return gated(async () => {
        const phc = await storedHash();
        // The span covers the hashing only, not the wait for a worker.
        return inSpan('password.verify', { 'feegate.password.algorithm': 'argon2id' }, async () => {
          // An unknown user tries as many spellings as a known one, against the dummy: same time.
          const ok = await anySpelling(phc ?? DUMMY_HASH, password);
          return ok && phc !== null;
        });
      }, clientGone);
    },
    assertCapacity,
    queued: () => waiting.length,
    close: () => pool.close(),
  };
}
