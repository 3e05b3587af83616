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
import { expectStatus, type LoadResult, login, mapConcurrent, request, warmThenRun } from './load.js';
import type { BulkRun, FirstStart, ProcessCeiling } from './report.js';
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
