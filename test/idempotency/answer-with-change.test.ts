/**
 * Every answer is stored in the transaction of the change it reports (contract
 * section 21): with the late store (the plugin's `finish`, for answers no change
 * made) broken, every POST and PATCH that changes something must still replay
 * its first answer, since only its change's transaction stored it. A new
 * operation without a case in test/helpers/changing-requests.ts fails the
 * coverage check.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { count, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { apiKeys, idempotencyKeys } from '../../src/db/schema.js';
import { useTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { openapiDocument, operations } from '../helpers/openapi.js';
import { seedCatalogue } from '../helpers/plans.js';
import { CHANGING_REQUESTS, PLATFORM_PLANS, seedCaseCustomer } from '../helpers/changing-requests.js';
import { deliveringTo, type Receiver, startReceiver } from '../helpers/webhooks.js';

/** Public operations have no caller to scope a key to: they keep nothing (docs/design.md). */
const PUBLIC = new Set([
  'POST /v1/login',
  'POST /v1/login/challenge',
  'POST /v1/login/refresh',
  'POST /v1/login/forgot-password',
  'POST /v1/login/confirm-forgot-password',
]);

/** Operations that change nothing: like a dry run, their answer is stored on its own (docs/design.md). */
const CHANGES_NOTHING = new Set(['POST /v1/fee-quotes']);

describe('Idempotency-Key: an answer is stored with its change', () => {
  let receiver: Receiver;
  let database: TestDatabase;
  let app: FastifyInstance;
  let finish: FastifyInstance['services']['idempotency']['finish'];
  before(async () => {
    receiver = await startReceiver();
    database = await createTestDatabase();
    // No anonymous rate limit: every case logs in from the same address, within a minute.
    app = await buildApp({
      config: testConfig(deliveringTo(receiver, { rateLimitAnonymousPerMinute: 0 })),
      database: database.database,
    });
    await app.ready();
    finish = app.services.idempotency.finish;
    await app.services.importer.importDocument({ payment_plans: Object.values(PLATFORM_PLANS) });
  });
  after(async () => {
    await app?.close();
    await database?.drop();
    await receiver?.close();
  });

  it('every POST and PATCH of a caller has a case here', async () => {
    const doc = await openapiDocument(app);
    const missing = operations(doc)
      .filter((op) => op.method === 'POST' || op.method === 'PATCH')
      .map((op) => `${op.method} ${op.path}`)
      .filter((name) => !PUBLIC.has(name) && !CHANGES_NOTHING.has(name) && !(name in CHANGING_REQUESTS));
    assert.deepEqual(missing, []);
  });

  for (const [operation, prepare] of Object.entries(CHANGING_REQUESTS)) {
    it(`${operation}: a change and its answer commit together, so a retry replays it with the late store broken`, async () => {
      const seeded = await seedCaseCustomer(app, receiver);
      const { endsLogin, headers, ...request } = await prepare(seeded);
      const late: string[] = [];
      // The fault between a change and a later store: only an answer stored in the change's transaction survives it.
      app.services.idempotency.finish = async () => {
        late.push(operation);
        throw new Error('injected fault: the answer was stored after its change');
      };
      try {
        const send = () =>
          app.inject({
            ...request,
            headers: { ...(headers ?? seeded.headers), 'idempotency-key': `with-change ${operation}` },
          });
        const first = await send();
        assert.ok(first.statusCode < 300, `${first.statusCode} ${first.body}`);
        assert.deepEqual(late, [], 'the answer was stored outside the change');
        const [stored] = await database.database.db
          .select()
          .from(idempotencyKeys)
          .where(eq(idempotencyKeys.key, `with-change ${operation}`));
        assert.equal(stored?.status, first.statusCode, 'the committed change has its answer');
        if (endsLogin) return;
        const replay = await send();
        assert.equal(replay.headers['idempotent-replayed'], 'true', `${replay.statusCode} ${replay.body}`);
        assert.equal(replay.statusCode, first.statusCode);
        assert.equal(replay.headers.location, first.headers.location);
        assert.equal(replay.body, first.body);
      } finally {
        // The next case shares the app: it prepares with the store working.
        app.services.idempotency.finish = finish;
      }
    });
  }
});

describe('Idempotency-Key: an answer rolls back with its change', () => {
  const h = useTestApp();

  it('a change that rolls back at its commit leaves no answer, and its retry makes the key once', async () => {
    const app = await h.app();
    const { world, headers } = await seedCatalogue(app);
    const db = h.db.current.database.db;
    const keys = async () => (await db.select({ n: count() }).from(apiKeys))[0]!.n;
    // Checked at COMMIT, after the answer was written in the same transaction: both must go.
    await db.execute(
      sql.raw(`CREATE FUNCTION fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected fault at commit'; END $$`),
    );
    await db.execute(
      sql.raw(`CREATE CONSTRAINT TRIGGER fail_at_commit AFTER INSERT ON api_keys
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_at_commit()`),
    );
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: { ...headers, 'idempotency-key': 'rolled-back' },
        payload: { user: 'integration@alpha.test', customer_id: world.customerId },
      });
    const before = await keys();
    const failed = await send();
    assert.equal(failed.statusCode, 500, failed.body);
    assert.equal(await keys(), before, 'no key');
    assert.deepEqual(await db.select().from(idempotencyKeys), [], 'no answer without its change');
    await db.execute(sql.raw('DROP TRIGGER fail_at_commit ON api_keys'));
    const retry = await send();
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
    assert.equal(await keys(), before + 1);
  });
});
