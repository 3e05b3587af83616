/**
 * The phases measured by a fixed-rate /health probe beside other work: the login
 * storm, and a scheduled /all applied by the service's own worker. The probe is
 * open loop and in its own thread (bench/load.ts), so its p99 is how long a cheap
 * request waits in the service while the work runs.
 */
import {
  expectStatus,
  type LoadResult,
  login,
  median,
  mergeLoads,
  type ProbeOutput,
  probeSummary,
  request,
  prepareLoadInBackground,
  probeWindow,
  runProbe,
  startProbe,
} from './load.js';
import type { PhaseContext } from './phases.js';
import { type ScheduledAllResult, type StormResult, stormFactor } from './report.js';
import { MIN_LEAD_SECONDS } from '../src/features/fee-plans/scheduled-changes-service.js';

/** The storm's load generator yields CPU to the service and the probe, as clients on other machines would. */
const STORM_GENERATOR_NICE = 10;

/** Storm rounds: one quiet run's or one storm's p99 on a shared VM moves by 2x, the median of several does not. */
export const STORM_ROUNDS = 5;
const STORM_PROBE = { path: '/health', connections: 10, rate: 400 };

/**
 * Logins at full concurrency while a fixed-rate /health probe runs beside them.
 * The probe is open loop (a set number of requests per second) and runs in its
 * own thread, so its latency shows how long a cheap request waits in the
 * service, not how fast a saturated server can go or how busy the load
 * generator is.
 *
 * Quiet and storm runs alternate, `rounds` of each plus a last quiet run: each
 * round's factor divides its storm's p99 by the p99 of the quiet runs on either
 * side of it (pooled), so the machine's drift over the phase touches both, and
 * the verdict takes the median of the rounds' factors.
 */
export async function loginStorm(ctx: PhaseContext, rounds = STORM_ROUNDS): Promise<StormResult> {
  await login(ctx.baseUrl, ctx.seed.main.login);
  const seconds = Math.max(3, Math.ceil(ctx.durationSeconds / 2));
  const health = { ...STORM_PROBE, durationSeconds: seconds };
  const storm = {
    path: '/v1/login',
    method: 'POST' as const,
    body: ctx.seed.main.login,
    connections: ctx.connections,
    durationSeconds: seconds,
  };
  await runProbe(ctx.baseUrl, { ...health, durationSeconds: 2 });
  await (await prepareLoadInBackground(ctx.baseUrl, { ...storm, durationSeconds: 2 }, STORM_GENERATOR_NICE)).run();
  await settle();
  const quiet: ProbeOutput[] = [await runProbe(ctx.baseUrl, health)];
  const during: ProbeOutput[] = [];
  const logins: LoadResult[] = [];
  for (let round = 0; round < rounds; round++) {
    const generator = await prepareLoadInBackground(ctx.baseUrl, storm, STORM_GENERATOR_NICE);
    const [load, probed] = await Promise.all([generator.run(), runProbe(ctx.baseUrl, health)]);
    logins.push(load);
    during.push(probed);
    await settle();
    quiet.push(await runProbe(ctx.baseUrl, health));
    ctx.log(
      `   storm round ${round + 1}/${rounds}: /health p99 ${probeSummary(quiet[round]!, quiet[round + 1]!).p99.toFixed(2)} -> ${probeSummary(probed).p99.toFixed(2)} ms`,
    );
  }
  const perRound = during.map((probed, round) => {
    const alone = probeSummary(quiet[round]!, quiet[round + 1]!).p99;
    const stormy = probeSummary(probed).p99;
    return { aloneP99: alone, duringP99: stormy, factor: stormFactor(alone, stormy) };
  });
  return {
    logins: mergeLoads(logins),
    healthAlone: probeSummary(...quiet),
    healthDuring: probeSummary(...during),
    rounds: perRound,
    factor: median(perRound.map((r) => r.factor)),
  };
}

/** Quiet again: logins still queued from a storm finish first. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2000));

interface ScheduledChangeAnswer {
  id: string;
  status: string;
  applied_at: string | null;
  outcome: { merchants: number; assignments_added: number; assignments_removed: number } | null;
}

/** Polls the customer's scheduled changes until `id` is APPLIED. */
async function untilApplied(
  ctx: PhaseContext,
  headers: Record<string, string>,
  id: string,
  effectiveAt: Date,
): Promise<ScheduledChangeAnswer> {
  for (;;) {
    if (Date.now() > effectiveAt.getTime() + SCHEDULED_APPLY_TIMEOUT_MS)
      throw new Error(`the scheduled /all was not applied within ${SCHEDULED_APPLY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const listed = await request(ctx.baseUrl, 'GET', '/v1/fee-rules/scheduled-changes?size=10', { headers });
    expectStatus(listed, 200, 'GET /v1/fee-rules/scheduled-changes');
    const change = (listed.body as { data: ScheduledChangeAnswer[] }).data.find((c) => c.id === id);
    if (change?.status === 'APPLIED') return change;
  }
}

/** How long the phase waits for the worker to apply the change before it gives up. */
const SCHEDULED_APPLY_TIMEOUT_MS = 180_000;

/**
 * A scheduled /all of the bulk customer's 100,000 merchants x the 12 main plans,
 * applied by the service's own worker, while the fixed-rate /health probe of the
 * login storm runs: its p99 from the instant the change falls due until it is
 * applied (its applied_at), against its p99 alone just before and after.
 */
export async function scheduledAll(ctx: PhaseContext): Promise<ScheduledAllResult> {
  const bulk = ctx.seed.bulk;
  if (!bulk) throw new Error('the data set has no customer for the scheduled /all (seedDatabase scheduledAll)');
  const token = await login(ctx.baseUrl, bulk.login);
  const headers = { authorization: `Bearer ${token}` };
  const seconds = Math.max(3, Math.ceil(ctx.durationSeconds / 2));
  const health = { ...STORM_PROBE, durationSeconds: seconds };
  await runProbe(ctx.baseUrl, { ...health, durationSeconds: 2 });
  const before = await runProbe(ctx.baseUrl, health);
  const effectiveAt = new Date(Date.now() + (MIN_LEAD_SECONDS + 1) * 1000);
  const accepted = await request(ctx.baseUrl, 'POST', '/v1/fee-rules/bulk-assign/all', {
    headers,
    body: { payment_plan_ids: ctx.seed.main.planIds, effective_at: effectiveAt.toISOString() },
  });
  expectStatus(accepted, 202, 'POST /v1/fee-rules/bulk-assign/all with effective_at');
  const { id } = (accepted.body as { scheduled_change: ScheduledChangeAnswer }).scheduled_change;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, effectiveAt.getTime() - Date.now() - 500)));
  const probe = await startProbe(ctx.baseUrl, { ...STORM_PROBE, durationSeconds: SCHEDULED_APPLY_TIMEOUT_MS / 1000 });
  const waited = await untilApplied(ctx, headers, id, effectiveAt).then(
    (change) => ({ change }),
    (error: unknown) => ({ error }),
  );
  const probed = await probe.stop();
  if ('error' in waited) throw waited.error;
  const applied = waited.change;
  const expected = bulk.merchants * ctx.seed.main.planIds.length;
  if (applied.outcome?.merchants !== bulk.merchants || applied.outcome.assignments_added !== expected)
    throw new Error(
      `the scheduled /all applied ${JSON.stringify(applied.outcome)}, expected ${expected} assignments added`,
    );
  const appliedAt = Date.parse(applied.applied_at!);
  await settle();
  const after = await runProbe(ctx.baseUrl, health);
  const alone = probeSummary(before, after);
  const during = probeSummary(probeWindow(probed, effectiveAt.getTime(), appliedAt));
  return {
    merchants: bulk.merchants,
    plans: ctx.seed.main.planIds.length,
    dueToAppliedSeconds: (appliedAt - effectiveAt.getTime()) / 1000,
    healthAlone: alone,
    healthDuring: during,
    factor: stormFactor(alone.p99, during.p99),
  };
}
