/**
 * Line 8: what an Idempotency-Key costs a key creation (contract section 21:
 * with it, at least 0.8x the throughput of without, in the same run). Workers
 * create a key and delete it (a user holds at most 10), timing the POST only;
 * rounds without and with a fresh key alternate, so the machine's drift falls
 * on both alike.
 */
import { randomUUID } from 'node:crypto';
import { expectStatus, login, percentile, request } from './load.js';
import type { PhaseContext } from './phases.js';

export interface CreationRate {
  creations: number;
  /** Creations per second of POST time per worker: the rate the POST alone allows at this concurrency. */
  perSec: number;
  p50: number;
  p99: number;
}

export interface IdempotentCreation {
  without: CreationRate;
  with: CreationRate;
  /** with.perSec / without.perSec. */
  ratio: number;
}

const WORKERS = 8;
const ROUNDS = 2;

export async function idempotentKeyCreation(ctx: PhaseContext): Promise<IdempotentCreation> {
  const token = await login(ctx.baseUrl, ctx.seed.main.login);
  const auth = { authorization: `Bearer ${token}` };
  const roundMs = (ctx.durationSeconds * 1000) / (2 * ROUNDS);
  const timings: Record<'without' | 'with', number[]> = { without: [], with: [] };

  async function worker(n: number, keyed: boolean, until: number): Promise<void> {
    while (performance.now() < until) {
      const started = performance.now();
      const created = await request(ctx.baseUrl, 'POST', '/v1/api-keys', {
        headers: keyed ? { ...auth, 'idempotency-key': randomUUID() } : auth,
        body: { user: `idempotency-${n}@bench.test`, customer_id: ctx.seed.main.customerId },
      });
      timings[keyed ? 'with' : 'without'].push(performance.now() - started);
      expectStatus(created, 201, `POST /v1/api-keys${keyed ? ' with Idempotency-Key' : ''}`);
      const { id } = created.body as { id: string };
      expectStatus(await request(ctx.baseUrl, 'DELETE', `/v1/api-keys/${id}`, { headers: auth }), 204, 'DELETE');
    }
  }

  for (let round = 0; round < 2 * ROUNDS; round++) {
    const keyed = round % 2 === 1;
    const until = performance.now() + roundMs;
    await Promise.all(Array.from({ length: WORKERS }, (_, n) => worker(n, keyed, until)));
  }
  const rate = (times: number[]): CreationRate => {
    const sorted = [...times].sort((a, b) => a - b);
    const busySeconds = times.reduce((sum, t) => sum + t, 0) / 1000 / WORKERS;
    return {
      creations: times.length,
      perSec: times.length / busySeconds,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
    };
  };
  const without = rate(timings.without);
  const withKey = rate(timings.with);
  return { without, with: withKey, ratio: withKey.perSec / without.perSec };
}
