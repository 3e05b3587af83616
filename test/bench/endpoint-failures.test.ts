/**
 * The benchmark fails, never skips, a phase whose endpoint does not answer 2xx:
 * a call a phase needs that answers another status stops the run naming it
 * (bench/phases.ts), and a load that drew non-2xx answers fails its line
 * (bench/report.ts). No load is run here: each phase is stopped by its check.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { EndpointFailed, type LoadResult } from '../../bench/load.js';
import { feeRulesAt, keyAuth, type PhaseContext } from '../../bench/phases.js';
import type { BenchReport, StormResult } from '../../bench/report.js';
import { failures } from '../../bench/report-table.js';
import { useTestApp } from '../helpers/app.js';
import { seedWorld, uuid } from '../helpers/fixtures.js';

const h = useTestApp();

/** A real service on a loopback port, as bench/run.ts drives it. */
async function context(
  login = { user: 'nobody@bench.test', password: 'wrong-password-1' },
  planIds: string[] = [],
): Promise<PhaseContext> {
  const app = await h.app();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    durationSeconds: 1,
    connections: 1,
    seed: { main: { customerId: uuid('c'), login, planIds }, wide: { customerId: uuid('c'), login } },
    log: () => {},
  };
}

const load = (statuses: Record<string, number>, errors = 0): LoadResult => {
  const total = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  const ok = Object.entries(statuses).reduce((sum, [code, n]) => (code.startsWith('2') ? sum + n : sum), 0);
  return { okPerSec: ok / 10, totalPerSec: total / 10, p50: 1, p99: 2, statuses, errors };
};

const storm = (logins: LoadResult, health = load({ 200: 4000 })): StormResult => ({
  logins,
  healthAlone: health,
  healthDuring: health,
  rounds: [{ aloneP99: 2, duringP99: 3, factor: 1.5 }],
  factor: 1.5,
});

function report(phases: Partial<BenchReport>): BenchReport {
  return {
    driver: 'postgres',
    startedAt: '2026-11-23T00:00:00.000Z',
    seconds: 60,
    machine: { cpus: 2, node: '22', platform: 'linux x64' },
    settings: { durationSeconds: 10, connections: 50, loginConcurrency: 2, loginQueueLimit: 100 },
    ceiling: load({ 200: 100_000 }),
    ...phases,
  };
}

describe('bench: a phase whose endpoint fails', () => {
  it('stops the run naming the call and the status when a keyed endpoint refuses the key', async () => {
    const ctx = await context();
    await assert.rejects(keyAuth(ctx, ['fgk_notakey']), (err: Error) => {
      assert.ok(err instanceof EndpointFailed);
      assert.match(err.message, /^GET \/v1\/users\/me answered 401, expected 200: .*invalid_api_key/);
      return true;
    });
  });

  it('stops the run naming the call and the status when its setup call fails', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const ctx = await context(world.login, [uuid('e')]);
    await assert.rejects(feeRulesAt(ctx), (err: Error) => {
      assert.ok(err instanceof EndpointFailed);
      assert.match(
        err.message,
        /^POST \/v1\/fee-rules\/bulk-assign\/all answered 422, expected 201: .*unknown_payment_plans/,
      );
      return true;
    });
  });

  it('passes loads answered 2xx within their budgets', () => {
    assert.deepEqual(
      failures(
        report({
          keyAuth: load({ 200: 90_000 }),
          feeRulesAt: load({ 200: 50_000 }),
          loginStorm: storm(load({ 200: 700 })),
        }),
      ),
      [],
    );
  });

  it('fails a load that drew non-2xx answers, within its budget or without one, naming the statuses', () => {
    const failed = failures(report({ keyAuth: load({ 200: 90_000, 500: 3 }), feeRulesAt: load({ 404: 5_000 }) }));
    assert.equal(failed.length, 2);
    assert.match(failed[0]!, /^2\. key auth GET \/v1\/users\/me: .*\[3x500\]$/);
    assert.match(failed[1]!, /^3b\. fee rules at an instant .*\[5000x404\]$/);
  });

  it('fails a load with requests that got no answer, and a ceiling that was not answered 2xx', () => {
    const failed = failures(report({ ceiling: load({ 200: 100_000, 503: 1 }), listing: load({ 200: 40_000 }, 2) }));
    assert.equal(failed.length, 2);
    assert.match(failed[0]!, /^1\. ceiling GET \/health: .*\[1x503\]$/);
    assert.match(failed[1]!, /^3\. listing .*\[2 errors\]$/);
  });

  it("divides a line measured on its own process by that process's ceiling, whose failures fail too", () => {
    const own = (before: LoadResult, after: LoadResult) => ({
      rateLimited: load({ 200: 50_000 }),
      rateLimitedCeiling: { before, after },
    });
    // 5,000 req/s: 0.50 of line 1's 10,000, but 0.36 of the 14,000 measured around it on its process (budget 0.4).
    assert.match(
      failures(report(own(load({ 200: 150_000 }), load({ 200: 130_000 })))).join('\n'),
      /^6\. rate-limited keys \+ Redis GET \/v1\/users\/me: 5,000 req\/s/,
    );
    assert.deepEqual(failures(report(own(load({ 200: 100_000 }), load({ 200: 120_000 })))), []);
    assert.match(
      failures(report(own(load({ 200: 100_000 }), load({ 200: 120_000, 503: 2 })))).join('\n'),
      /^its ceiling: GET \/health on its process, before and after: .*\[2x503\]/,
    );
  });

  it("counts a login storm's 503 refusals as measured, but fails any other status of the storm or its probe", () => {
    assert.deepEqual(failures(report({ loginStorm: storm(load({ 200: 700, 503: 300 })) })), []);
    assert.match(
      failures(report({ loginStorm: storm(load({ 200: 700, 500: 1 })) })).join('\n'),
      /^4\. login storm POST \/v1\/login: .*\[1x500\]$/,
    );
    assert.match(
      failures(report({ loginStorm: storm(load({ 200: 700 }), load({ 200: 4000, 429: 1 })) })).join('\n'),
      /^\/health p99 alone -> during, pooled: .*\[1x429\]/,
    );
  });
});
