/**
 * Line 8: what an Idempotency-Key costs a key creation (contract section 21:
 * with it, at least 0.8x the throughput of without, in the same run), and what
 * a replay costs (issue 40: a replay answers at least as fast as the first
 * request). Workers create a key and delete it (a user holds at most 10),
 * timing the POST only; in replay rounds each worker makes one key with its
 * Idempotency-Key, then sends that same request again and again, timing the
 * replays. Rounds without, with a fresh key and replaying alternate, so the
 * machine's drift falls on all three alike.
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
  /** The same keyed request sent again: answered from the stored answer. */
  replay: CreationRate;
  /** replay.perSec / with.perSec: a replay against the first requests with a key. */
  replayRatio: number;
}

type Kind = 'without' | 'with' | 'replay';
const KINDS: Kind[] = ['without', 'with', 'replay'];

const WORKERS = 8;
const ROUNDS = 2;

export async function idempotentKeyCreation(ctx: PhaseContext): Promise<IdempotentCreation> {
  const token = await login(ctx.baseUrl, ctx.seed.main.login);
  const auth = { authorization: `Bearer ${token}` };
  const roundMs = (ctx.durationSeconds * 1000) / (KINDS.length * ROUNDS);
  const timings: Record<Kind, number[]> = { without: [], with: [], replay: [] };
  const create = (n: number, headers: Record<string, string>) =>
    request(ctx.baseUrl, 'POST', '/v1/api-keys', {
      headers,
      body: { user: `idempotency-${n}@bench.test`, customer_id: ctx.seed.main.customerId },
    });
  const remove = async (id: string) =>
    expectStatus(await request(ctx.baseUrl, 'DELETE', `/v1/api-keys/${id}`, { headers: auth }), 204, 'DELETE');

  /** One key made with its Idempotency-Key, then that request replayed until the round ends; the key deleted. */
  async function replayer(n: number, until: number): Promise<void> {
    const headers = { ...auth, 'idempotency-key': randomUUID() };
    const first = await create(n, headers);
    expectStatus(first, 201, 'POST /v1/api-keys with Idempotency-Key');
    const { id } = first.body as { id: string };
    while (performance.now() < until) {
      const started = performance.now();
      const replayed = await create(n, headers);
      timings.replay.push(performance.now() - started);
      expectStatus(replayed, 201, 'POST /v1/api-keys replayed');
      if ((replayed.body as { id: string }).id !== id) throw new Error('a replay answered another key: it was not one');
    }
    await remove(id);
  }

  async function worker(n: number, keyed: boolean, until: number): Promise<void> {
    while (performance.now() < until) {
      const started = performance.now();
      const created = await create(n, keyed ? { ...auth, 'idempotency-key': randomUUID() } : auth);
      timings[keyed ? 'with' : 'without'].push(performance.now() - started);
      expectStatus(created, 201, `POST /v1/api-keys${keyed ? ' with Idempotency-Key' : ''}`);
      await remove((created.body as { id: string }).id);
    }
  }

  for (let round = 0; round < KINDS.length * ROUNDS; round++) {
    const kind = KINDS[round % KINDS.length]!;
    const until = performance.now() + roundMs;
    await Promise.all(
      Array.from({ length: WORKERS }, (_, n) =>
        kind === 'replay' ? replayer(n, until) : worker(n, kind === 'with', until),
      ),
    );
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
  const replay = rate(timings.replay);
  return {
    without,
    with: withKey,
    ratio: withKey.perSec / without.perSec,
    replay,
    replayRatio: replay.perSec / withKey.perSec,
  };
}
