/**
 * The measured phases. Each one checks that its endpoint exists first and
 * reports "skipped (endpoint not available: <status>)" instead of failing, so
 * the harness runs on a service that has only part of the contract built.
 */
import { runFeeRulesBench } from './fee-rules.js';
import { type LoadResult, login, mapConcurrent, request, runLoad, probeSummary, runLoadInBackground, runProbe, warmThenRun } from './load.js';
import type { BulkRun, Skipped, StormResult } from './report.js';
import type { SeedData } from './seed.js';

export interface PhaseContext {
  baseUrl: string;
  durationSeconds: number;
  connections: number;
  seed: SeedData;
  log(message: string): void;
}

const unavailable = (status: number): Skipped => ({ skipped: `skipped (endpoint not available: ${status})` });

export async function ceiling(ctx: PhaseContext): Promise<LoadResult> {
  return warmThenRun(ctx.baseUrl, { path: '/health', connections: ctx.connections, durationSeconds: ctx.durationSeconds });
}

export const KEY_USERS = 100;
export const KEYS_PER_USER = 10; // the contract's limit of ENABLED keys per user

/** 1,000 customer keys through the public API, spread over 100 integration users. */
export async function createKeys(ctx: PhaseContext): Promise<string[] | Skipped> {
  const token = await login(ctx.baseUrl, ctx.seed.main.login);
  const create = async (n: number) =>
    request(ctx.baseUrl, 'POST', '/v1/api-keys', {
      headers: { authorization: `Bearer ${token}` },
      body: { user: `bench-${n % KEY_USERS}@bench.test`, customer_id: ctx.seed.main.customerId },
    });
  const first = await create(0);
  if (first.status !== 201) return unavailable(first.status);
  const started = performance.now();
  // Modest concurrency: the per-user limit serialises creations for one user anyway.
  const rest = await mapConcurrent(Array.from({ length: KEY_USERS * KEYS_PER_USER - 1 }, (_, i) => i + 1), 8, create);
  const responses = [first, ...rest];
  const failed = responses.filter((r) => r.status !== 201);
  if (failed.length) throw new Error(`${failed.length} key creations failed, first with ${failed[0]!.status}: ${JSON.stringify(failed[0]!.body)}`);
  ctx.log(`created ${responses.length} API keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return responses.map((r) => (r.body as { api_key: string }).api_key);
}

/** Checks one keyed request answers 200 before loading it, so a missing feature is a skip, not 100% errors. */
async function keyed(ctx: PhaseContext, keys: string[] | Skipped, path: string): Promise<LoadResult | Skipped> {
  if (!Array.isArray(keys)) return keys;
  const probe = await request(ctx.baseUrl, 'GET', path, { headers: { 'x-api-key': keys[0]! } });
  if (probe.status !== 200) return unavailable(probe.status);
  // Every key in turn: the realistic case of many integrations, and it exercises any key cache fully.
  return warmThenRun(ctx.baseUrl, {
    path,
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
    rotateHeaders: keys.map((key) => ({ 'x-api-key': key })),
  });
}

export const keyAuth = (ctx: PhaseContext, keys: string[] | Skipped) => keyed(ctx, keys, '/v1/users/me');
export const listing = (ctx: PhaseContext, keys: string[] | Skipped) => keyed(ctx, keys, '/v1/api-keys?size=10');

/** The storm's load generator yields CPU to the service and the probe, as clients on other machines would. */
const STORM_GENERATOR_NICE = 10;

/**
 * Logins at full concurrency while a fixed-rate /health probe runs beside them.
 * The probe is open loop (a set number of requests per second) and runs in its
 * own thread, so its latency shows how long a cheap request waits in the
 * service, not how fast a saturated server can go or how busy the load
 * generator is.
 */
export async function loginStorm(ctx: PhaseContext): Promise<StormResult | Skipped> {
  const probe = await request(ctx.baseUrl, 'POST', '/v1/login', { body: ctx.seed.main.login });
  if (probe.status !== 200) return unavailable(probe.status);
  const health = { path: '/health', connections: 10, rate: 200, durationSeconds: ctx.durationSeconds };
  await runProbe(ctx.baseUrl, { ...health, durationSeconds: 2 });
  const before = await runProbe(ctx.baseUrl, health);
  const storm = { path: '/v1/login', method: 'POST' as const, body: ctx.seed.main.login, connections: ctx.connections, durationSeconds: ctx.durationSeconds };
  await runLoadInBackground(ctx.baseUrl, { ...storm, durationSeconds: 2 }, STORM_GENERATOR_NICE);
  const [logins, during] = await Promise.all([runLoadInBackground(ctx.baseUrl, storm, STORM_GENERATOR_NICE), runProbe(ctx.baseUrl, health)]);
  // Quiet again: logins still queued from the storm finish first.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = await runProbe(ctx.baseUrl, health);
  // "Alone" pools the runs before and after the storm: one quiet run's p99 on a shared VM moves by 2x.
  return { logins, healthAlone: probeSummary(before, after), healthDuring: probeSummary(during) };
}

/**
 * POST /v1/fee-rules/bulk-assign/all for 10,000 and 100,000 merchants x 12 plans,
 * measured by bench/fee-rules.ts (owned with the feature): it seeds its own
 * scratch database with current assignments to replace and to keep, and times
 * the service call in this process, so it does not add to the server's RSS.
 */
export async function bulkAssign(ctx: PhaseContext, options: { embedded: boolean; adminUrl: string }): Promise<BulkRun[]> {
  const result = await runFeeRulesBench({ ...options, log: ctx.log });
  return result.figures.map((f) => ({ merchants: f.merchants, plans: f.plans, seconds: f.seconds, rowsPerSec: f.rowsPerSecond, via: 'bench/fee-rules.ts' }));
}
