/**
 * The measured phases. Each one first checks that the calls it needs answer as
 * they should, and stops the run with EndpointFailed (bench/load.ts) when one
 * does not: a phase whose endpoint fails is a failure, never a skip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEMO_LOGINS } from '../src/features/operator/demo-data.js';
import { runFeeRulesBench } from './fee-rules.js';
import {
  expectStatus,
  type LoadResult,
  login,
  mapConcurrent,
  median,
  mergeLoads,
  type ProbeOutput,
  probeSummary,
  request,
  prepareLoadInBackground,
  probeWindow,
  runProbe,
  startProbe,
  warmThenRun,
} from './load.js';
import {
  type BulkRun,
  type FirstStart,
  type ProcessCeiling,
  type ScheduledAllResult,
  type StormResult,
  stormFactor,
} from './report.js';
import { MIN_LEAD_SECONDS } from '../src/features/fee-plans/scheduled-changes-service.js';
import { type SeedData, WIDE_MERCHANTS } from './seed.js';
import { MAX_MERCHANT_PAGE_SIZE } from '../src/features/merchants/merchant-answer-schemas.js';
import { startServer } from './server-process.js';

export interface PhaseContext {
  baseUrl: string;
  durationSeconds: number;
  connections: number;
  seed: SeedData;
  log(message: string): void;
}

export async function ceiling(ctx: PhaseContext): Promise<LoadResult> {
  return warmThenRun(ctx.baseUrl, {
    path: '/health',
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
  });
}

/** Runs `measure` between two ceiling measurements on the same process (`ProcessCeiling`, bench/report.ts). */
export async function betweenCeilings<T>(
  ctx: PhaseContext,
  measure: () => Promise<T>,
): Promise<{ result: T; ceiling: ProcessCeiling }> {
  const before = await ceiling(ctx);
  const result = await measure();
  return { result, ceiling: { before, after: await ceiling(ctx) } };
}

export const KEY_USERS = 100;
export const KEYS_PER_USER = 10; // the limit of ENABLED keys per user (docs/api.md#conventions, 409)

/**
 * 1,000 customer keys through the public API, spread over 100 integration users
 * (`users` of them); `settings` are sent with each (e.g. a rate_limit).
 */
export async function createKeys(
  ctx: PhaseContext,
  options: { users?: number; userPrefix?: string; settings?: object } = {},
): Promise<string[]> {
  const users = options.users ?? KEY_USERS;
  const token = await login(ctx.baseUrl, ctx.seed.main.login);
  const create = async (n: number) =>
    request(ctx.baseUrl, 'POST', '/v1/api-keys', {
      headers: { authorization: `Bearer ${token}` },
      body: {
        user: `${options.userPrefix ?? 'bench'}-${n % users}@bench.test`,
        customer_id: ctx.seed.main.customerId,
        ...options.settings,
      },
    });
  // One first, so a failing endpoint stops the run after one call, not 1,000.
  const first = await create(0);
  expectStatus(first, 201, 'POST /v1/api-keys');
  const started = performance.now();
  // Modest concurrency: the per-user limit serialises creations for one user anyway.
  const rest = await mapConcurrent(
    Array.from({ length: users * KEYS_PER_USER - 1 }, (_, i) => i + 1),
    8,
    create,
  );
  const responses = [first, ...rest];
  const failed = responses.filter((r) => r.status !== 201);
  if (failed.length) expectStatus(failed[0]!, 201, `POST /v1/api-keys (${failed.length} of ${responses.length})`);
  ctx.log(`created ${responses.length} API keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return responses.map((r) => (r.body as { api_key: string }).api_key);
}

/** Checks one keyed request answers 200 before loading it, so a failing endpoint stops the run instead of being timed. */
async function keyed(ctx: PhaseContext, keys: string[], path: string): Promise<LoadResult> {
  expectStatus(await request(ctx.baseUrl, 'GET', path, { headers: { 'x-api-key': keys[0]! } }), 200, `GET ${path}`);
  // Every key in turn: the realistic case of many integrations, and it exercises any key cache fully.
  return warmThenRun(ctx.baseUrl, {
    path,
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
    rotateHeaders: keys.map((key) => ({ 'x-api-key': key })),
  });
}

export const keyAuth = (ctx: PhaseContext, keys: string[]) => keyed(ctx, keys, '/v1/users/me');

/**
 * GET /v1/merchants/{id}/fee-rules?at= an instant whose answer comes from both
 * the present and the history: every merchant of the main customer is given the
 * 12 bench plans, then 10 of them are replaced; `at` lies between the two, so
 * the answer is 2 present assignments and 10 ended ones. With a customer token.
 */
export async function feeRulesAt(ctx: PhaseContext): Promise<LoadResult> {
  const token = await login(ctx.baseUrl, ctx.seed.main.login);
  const headers = { authorization: `Bearer ${token}` };
  const assignAll = (planIds: string[]) =>
    request(ctx.baseUrl, 'POST', '/v1/fee-rules/bulk-assign/all', { headers, body: { payment_plan_ids: planIds } });
  expectStatus(await assignAll(ctx.seed.main.planIds), 201, 'POST /v1/fee-rules/bulk-assign/all');
  // Times are kept to the millisecond: pauses keep `at` strictly between the two changes.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const at = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  expectStatus(await assignAll(ctx.seed.main.planIds.slice(0, 2)), 201, 'POST /v1/fee-rules/bulk-assign/all');
  const merchants = await request(ctx.baseUrl, 'GET', '/v1/merchants?size=1', { headers });
  expectStatus(merchants, 200, 'GET /v1/merchants?size=1');
  const merchantId = (merchants.body as { _embedded: { merchants: Array<{ id: string }> } })._embedded.merchants[0]!.id;
  const path = `/v1/merchants/${merchantId}/fee-rules?at=${encodeURIComponent(at)}`;
  const probe = await request(ctx.baseUrl, 'GET', path, { headers });
  expectStatus(probe, 200, 'GET /v1/merchants/{id}/fee-rules?at=');
  const held = (probe.body as { data: unknown[] }).data.length;
  if (held !== ctx.seed.main.planIds.length)
    throw new Error(`fee-rules?at= answered ${held} plans, expected ${ctx.seed.main.planIds.length}`);
  return warmThenRun(ctx.baseUrl, {
    path,
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
    headers,
  });
}
export const listing = (ctx: PhaseContext, keys: string[]) => keyed(ctx, keys, '/v1/api-keys?size=10');

/**
 * GET /v1/merchants?size=10000, the largest page the merchant listing serves (the
 * platform's maximum; integrations ask for it to take a whole list), of a customer
 * with 12,000 merchants, with a customer token: written as it is read, so 50 such
 * pages at once must stay within the service's memory budget.
 */
export async function fullPage(ctx: PhaseContext): Promise<LoadResult> {
  const token = await login(ctx.baseUrl, ctx.seed.wide.login);
  const headers = { authorization: `Bearer ${token}` };
  const path = `/v1/merchants?size=${MAX_MERCHANT_PAGE_SIZE}`;
  const probe = await request(ctx.baseUrl, 'GET', path, { headers });
  expectStatus(probe, 200, `GET ${path}`);
  const { _embedded, page } = probe.body as {
    _embedded: { merchants: unknown[] };
    page: { size: number; total_elements: number };
  };
  const served = _embedded.merchants.length;
  if (
    served !== MAX_MERCHANT_PAGE_SIZE ||
    page.size !== MAX_MERCHANT_PAGE_SIZE ||
    page.total_elements !== WIDE_MERCHANTS
  ) {
    throw new Error(`${path} answered ${served} merchants, page ${JSON.stringify(page)}`);
  }
  return warmThenRun(ctx.baseUrl, {
    path,
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
    headers,
  });
}

/**
 * Key authentication with keys that have their own rate_limit, on a service
 * whose counters are in Redis: every request is one Redis round trip. The limit
 * is high enough never to refuse, so this measures the cost of counting. It
 * runs on its own service process (bench/run.ts), so against that process's
 * ceiling.
 */
export async function rateLimitedKeyAuth(ctx: PhaseContext) {
  const keys = await createKeys(ctx, {
    users: 10,
    userPrefix: 'bench-limited',
    settings: { rate_limit: { limit: 100_000, window_seconds: 60 } },
  });
  return betweenCeilings(ctx, () => keyed(ctx, keys, '/v1/users/me'));
}

/** Logins whose access tokens the Bearer phase rotates through (each its own session). */
export const BEARER_TOKENS = 20;

/**
 * GET /v1/users/me with access tokens (JWTs): signature, claims and revocation
 * are checked in memory, so this should stay close to key authentication.
 */
export async function bearerAuth(ctx: PhaseContext): Promise<LoadResult> {
  const tokens = await mapConcurrent(
    Array.from({ length: BEARER_TOKENS }, (_, i) => i),
    2,
    () => login(ctx.baseUrl, ctx.seed.main.login),
  );
  const check = await request(ctx.baseUrl, 'GET', '/v1/users/me', {
    headers: { authorization: `Bearer ${tokens[0]}` },
  });
  expectStatus(check, 200, 'GET /v1/users/me with a bearer token');
  return warmThenRun(ctx.baseUrl, {
    path: '/v1/users/me',
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
    rotateHeaders: tokens.map((token) => ({ authorization: `Bearer ${token}` })),
  });
}

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

/**
 * A new user's first `npm start`: a fresh server on an empty embedded data
 * directory, which creates the database, migrates it and loads the demo data
 * before it answers /ready. Its peak RSS is the figure (VmHWM of the process).
 */
export async function firstStart(log: (message: string) => void): Promise<FirstStart> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'feegate-first-start-'));
  const started = performance.now();
  const server = await startServer({
    env: { DATABASE_URL: '', FEEGATE_DATA_DIR: path.join(dir, 'data'), FEEGATE_DEMO: 'true', LOG_LEVEL: 'warn' },
  });
  try {
    const readySeconds = (performance.now() - started) / 1000;
    await login(server.baseUrl, DEMO_LOGINS[0]);
    log(`first start ready in ${readySeconds.toFixed(1)} s, demo login works`);
    return { peakRssBytes: server.peakRss(), readySeconds };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * POST /v1/fee-rules/bulk-assign/all for 10,000 and 100,000 merchants x 12 plans,
 * measured by bench/fee-rules.ts (owned with the feature): it seeds its own
 * scratch database with current assignments to replace and to keep, and times
 * the service call in this process, so it does not add to the server's RSS.
 */
export async function bulkAssign(
  ctx: PhaseContext,
  options: { embedded: boolean; adminUrl: string },
): Promise<BulkRun[]> {
  const result = await runFeeRulesBench({ ...options, log: ctx.log });
  return result.figures.map((f) => ({
    merchants: f.merchants,
    plans: f.plans,
    seconds: f.seconds,
    rowsPerSec: f.rowsPerSecond,
    dryRunSeconds: f.dryRunSeconds,
    historyRows: f.historyRows,
    tableFloorSeconds: f.tableFloorSeconds,
    emptyFloorSeconds: f.emptyFloorSeconds,
    occupiedFloorSeconds: f.occupiedFloorSeconds,
    scheduledSeconds: f.scheduledSeconds,
    via: 'bench/fee-rules.ts',
  }));
}

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
