/**
 * One app and one seeded world shared by the tests of a merchant test file (each test makes the merchants it needs),
 * its callers, and the create and refusal checks. The app, world and callers are live bindings, set by
 * useMerchantApp's before(), so that the tests read them as plain names: one file's at a time, as the
 * test runner runs each file in a process of its own (call useMerchantApp once per file).
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { bearer, json } from './app.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { issueKey, loginAs, seedWorld, type World } from './fixtures.js';
import { createMerchant, merchantState } from './merchants.js';
import { apiKey } from './plans.js';

export let db: TestDatabase;
export let app: FastifyInstance;
export let world: World;
/** The first customer's owner, the other customer's, and a key of the first customer's first merchant. */
export let owner: Record<string, string>;
export let other: Record<string, string>;
export let merchantCaller: Record<string, string>;
let codes = 0;
/** A merchant_code no other test uses. */
export const freshCode = () => `CODE-${++codes}`;

/** Builds the file's app and world before its tests and drops them after; call once at the top of the file. */
export function useMerchantApp(): void {
  before(async () => {
    db = await createTestDatabase();
    app = await buildApp({
      config: testConfig({ rateLimitAnonymousPerMinute: 0, loginMaxFailures: 0 }),
      database: db.database,
    });
    await app.ready();
    world = await seedWorld(app);
    owner = bearer((await loginAs(app, world.login)).access_token) as Record<string, string>;
    other = bearer((await loginAs(app, world.otherLogin)).access_token) as Record<string, string>;
    const key = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    merchantCaller = apiKey(key.api_key) as Record<string, string>;
  });

  after(async () => {
    await app.close();
    await db.drop();
  });
}

export async function created(body: unknown, headers = owner, version = 'v1') {
  const res = await createMerchant(app, headers, body, version);
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** Sends `request` and checks its refusal: status, code, the field named, and that nothing was written. */
export async function refused(
  request: () => Promise<{ statusCode: number; body: string; json(): unknown }>,
  status: number,
  code: string,
  field?: string,
) {
  const before = await merchantState(db.database);
  const res = await request();
  assert.equal(res.statusCode, status, res.body);
  const problem = res.json() as { code: string; errors?: Array<{ field: string; message: string }> };
  assert.equal(problem.code, code, res.body);
  if (field)
    assert.ok(
      problem.errors?.some((e) => e.field === field),
      `names ${field}: ${res.body}`,
    );
  assert.equal(await merchantState(db.database), before, 'nothing was written');
  return problem;
}
