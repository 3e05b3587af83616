/**
 * Property-based fuzzing of every operation of the OpenAPI document (no input
 * ever yields a 5xx: docs/api.md#conventions). Each run sends one request built
 * from the document: hostile or valid values in every body field, query and
 * path parameter, with or without credentials, at the root or under /api (the
 * document's second server). Every answer must be below 500, every 4xx a
 * problem+json with a `code` the operation's document lists for that status,
 * and no listing page larger than the `size` parameter's `x-clamp-maximum`.
 *
 * Reproduce a failure with the seed it prints:
 *   FUZZ_SEED=1234 FUZZ_RUNS=10000 node --import tsx --test test/platform/fuzz.test.ts
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bearer, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { customers } from '../../src/db/schema.js';
import { type Auth, type Ids, requestFor } from '../helpers/fuzz-requests.js';
import { AnswerLedger, openapiDocument, operations } from '../helpers/openapi.js';
import { plan } from '../helpers/plans.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);

describe('fuzzing every operation of the document', () => {
  const h = useTestApp();

  it(`answers ${RUNS} generated requests without a 5xx, every 4xx a problem+json with a code`, {
    timeout: 600_000,
  }, async () => {
    // No per-address limit: thousands of logins from one address must reach validation and the service.
    const app = await h.app({ rateLimitAnonymousPerMinute: 0 });
    const firstPlan = plan();
    const world = await seedWorld(app, {
      payment_plans: [firstPlan, plan({ card_brand: 'MASTERCARD' }), plan({ term: 3, has_installments: true })],
    });
    const customerKey = await issueKey(app, { user: 'fuzz-customer@alpha.test', customerId: world.customerId });
    const merchantKey = await issueKey(app, {
      user: 'fuzz-merchant@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0],
    });
    const victims = await Promise.all(
      [0, 1, 2].map(() => issueKey(app, { user: 'victim@alpha.test', customerId: world.customerId })),
    );
    const limitedKey = await issueKey(
      app,
      { user: 'fuzz-limited@alpha.test', customerId: world.customerId },
      { rate_limit: { limit: 1, window_seconds: 86_400 } },
    );
    const readOnlyKey = await issueKey(
      app,
      { user: 'fuzz-read-only@alpha.test', customerId: world.customerId },
      { access: 'read_only' },
    );
    const merchantVictim = await issueKey(app, {
      user: 'victim-merchant@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0],
    });
    let token = (await loginAs(app, world.login)).access_token;
    const ids: Ids = {
      customers: [world.customerId, world.otherCustomerId],
      merchants: [...world.merchantIds, world.otherMerchantIds[0]!],
      plans: [firstPlan.id],
      victimKeys: [...victims.map((v) => v.id), merchantVictim.id],
      emails: ['fuzz-new@alpha.test', 'victim@alpha.test', world.login.user, 'Fuzz.Upper@Alpha.Test'],
    };
    const doc = await openapiDocument(app);
    const ops = operations(doc);
    const byId = new Map(ops.map((op) => [op.operationId, op]));
    const ledger = new AnswerLedger();
    const headersOf = (caller: Auth): Record<string, string> =>
      typeof caller === 'object'
        ? { [caller.header]: caller.value }
        : {
            none: {},
            token: bearer(token) as Record<string, string>,
            customerKey: { 'x-api-key': customerKey.api_key },
            merchantKey: { 'x-api-key': merchantKey.api_key },
            both: { ...(bearer(token) as Record<string, string>), 'x-api-key': customerKey.api_key },
            limitedKey: { 'x-api-key': limitedKey.api_key },
            readOnlyKey: { 'x-api-key': readOnlyKey.api_key },
          }[caller];

    console.log(`fuzz: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} over ${ops.length} operations`);
    const statuses = new Map<number, number>();
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ops).chain((op) => requestFor(doc, op, ids)),
        async (request) => {
          const response = await app.inject({
            method: request.method,
            url: request.url,
            headers: {
              ...headersOf(request.auth),
              ...(request.body !== undefined ? { 'content-type': request.contentType } : {}),
            },
            ...(request.body !== undefined ? { payload: request.body } : {}),
          });
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          ledger.record(byId.get(request.operationId)!, response.statusCode, response.body);
          const where = `${request.method} ${request.url.slice(0, 200)} → ${response.statusCode}`;
          assert.ok(response.statusCode < 500, `${where}: ${response.body.slice(0, 300)}`);
          if (response.statusCode >= 400) {
            assert.match(
              String(response.headers['content-type']),
              /^application\/problem\+json/,
              `${where}: ${response.body.slice(0, 300)}`,
            );
            const problem = JSON.parse(response.body) as { code?: unknown; status?: unknown };
            assert.equal(typeof problem.code, 'string', `${where}: ${response.body.slice(0, 300)}`);
            assert.equal(problem.status, response.statusCode);
          }
          if (response.statusCode === 200 && request.largestPage !== undefined) {
            // GET /v1/users answers in the platform's shape: its page descriptor is `metadata`.
            const body = JSON.parse(response.body) as { page?: { size: number }; metadata?: { size: number } };
            const page = (body.page ?? body.metadata)!;
            assert.ok(page.size >= 1 && page.size <= request.largestPage, `${where}: page.size ${page.size}`);
          }
          // A fuzzed logout with the live token revokes it: log in again so later requests stay authenticated.
          if (
            /^(\/api)?\/v1\/logout/.test(request.url) &&
            response.statusCode === 204 &&
            (request.auth === 'token' || request.auth === 'both')
          ) {
            // A fuzzed PATCH /v1/customers/me may have required two-factor codes: off again, or the login is a challenge.
            // Fuzzed wrong current passwords (POST /v1/users/me/password) count as failed logins: cleared too.
            await h.db.current.database.db.update(customers).set({ requireMfa: false });
            await app.services.auth.unlock(world.login.user);
            token = (await loginAs(app, world.login)).access_token;
          }
        },
      ),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `fuzz: ${RUNS} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
    // The generator reaches past validation: successes and refusals from the services, not only 400s.
    assert.ok(
      [200, 201, 204].some((s) => (statuses.get(s) ?? 0) > 0),
      'some requests succeed',
    );
    assert.ok(
      (statuses.get(404) ?? 0) > 0 && (statuses.get(401) ?? 0) > 0,
      'some reach the services and authentication',
    );
    // Every error code answered is one the operation's document lists for that status (its problems(...)).
    assert.ok(ledger.recordedErrors > 0);
    assert.deepEqual(ledger.undocumented(), [], 'codes answered that the document does not list for the operation');
  });
});
