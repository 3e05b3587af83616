/**
 * Idempotency-Key claims (contract section 21): one change for many requests at
 * once, on any instance; answers not kept (5xx); expiry after 24 hours; answers
 * sealed at rest, and one that no longer opens never made again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { apiKeys, idempotencyKeys } from '../../src/db/schema.js';
import { bearer, json, secondInstance, useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';

const h = useTestApp();
const database = () => h.db.current.database;

async function keyCount(): Promise<number> {
  const [row] = await database().db.select({ n: count() }).from(apiKeys);
  return row!.n;
}

async function setup() {
  const { app, world, token } = await customerSession(h);
  const payload = { user: 'integration@alpha.test', customer_id: world.customerId };
  const create = (on: FastifyInstance, key: string) =>
    on.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { ...bearer(token), 'idempotency-key': key } as Record<string, string>,
      payload,
    });
  return { app, world, create };
}

/** A fault in the database the next key creation runs into: `state` is the SQLSTATE it raises. */
async function failKeyCreation(state: string): Promise<() => Promise<void>> {
  const db = database().db;
  await db.execute(
    sql.raw(`CREATE FUNCTION fail_key_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'injected fault' USING ERRCODE = '${state}'; END $$`),
  );
  await db.execute(
    sql.raw('CREATE TRIGGER fail_key_insert BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION fail_key_insert()'),
  );
  return async () => {
    await db.execute(sql.raw('DROP TRIGGER fail_key_insert ON api_keys'));
    await db.execute(sql.raw('DROP FUNCTION fail_key_insert()'));
  };
}

describe('Idempotency-Key: claims', () => {
  it('20 requests at once with one key make one key; the others replay it or are told to retry', async () => {
    const { app, create } = await setup();
    const before = await keyCount();
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(app, 'burst')));
    const made = answers.filter((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined);
    assert.equal(made.length, 1, 'exactly one request made the key');
    for (const answer of answers) {
      if (answer === made[0]) continue;
      if (answer.statusCode === 409) {
        assert.equal(json(answer).code, 'idempotency_key_in_use');
        assert.equal(answer.headers['retry-after'], '1');
      } else {
        assert.equal(answer.statusCode, 201, answer.body);
        assert.equal(answer.headers['idempotent-replayed'], 'true');
        assert.equal(answer.body, made[0]!.body);
      }
    }
    assert.equal(await keyCount(), before + 1);
    // Once the first is done, every retry replays it.
    const retry = await create(app, 'burst');
    assert.equal(retry.body, made[0]!.body);
  });

  it('a retry on a second instance replays the answer of the first', async () => {
    const { app, create } = await setup();
    const first = await create(app, 'elsewhere');
    assert.equal(first.statusCode, 201, first.body);
    const other = await secondInstance(h);
    try {
      const replay = await create(other, 'elsewhere');
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
    } finally {
      await other.close();
    }
  });

  for (const [state, status] of [
    ['XX000', 500],
    ['57014', 503],
  ] as const) {
    it(`a ${status} is not kept: the retry is processed and makes the key`, async () => {
      const { app, create } = await setup();
      const before = await keyCount();
      const heal = await failKeyCreation(state);
      const failed = await create(app, `fault-${status}`);
      assert.equal(failed.statusCode, status, failed.body);
      assert.equal(await keyCount(), before, 'no key');
      await heal();
      assert.equal((await database().db.select().from(idempotencyKeys)).length, 0, 'the claim was let go');
      const retry = await create(app, `fault-${status}`);
      assert.equal(retry.statusCode, 201, retry.body);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.equal(await keyCount(), before + 1);
    });
  }

  it('an answer is replayed for 24 hours; after, the key is new again and the sweep removes the old entry', async () => {
    const { app, create } = await setup();
    const first = await create(app, 'day');
    // The clock is the database's: moving the entry's expiry into the past is its 24 hours passing.
    await database().db.update(idempotencyKeys).set({ expiresAt: sql`now() + interval '1 minute'` });
    assert.equal((await create(app, 'day')).headers['idempotent-replayed'], 'true', 'still within 24 hours');
    await database().db.update(idempotencyKeys).set({ expiresAt: sql`now() - interval '1 second'` });
    const afterADay = await create(app, 'day');
    assert.equal(afterADay.statusCode, 201);
    assert.equal(afterADay.headers['idempotent-replayed'], undefined);
    assert.notEqual(json(afterADay).id, json(first).id);
    await database().db.update(idempotencyKeys).set({ expiresAt: sql`now() - interval '1 second'` });
    assert.equal(await app.services.idempotency.removeExpired(), false, 'one batch was enough');
    assert.equal((await database().db.select().from(idempotencyKeys)).length, 0);
  });

  it('keeps an answer with a secret sealed at rest, bound to its row', async () => {
    const { app, create } = await setup();
    const first = await create(app, 'sealed');
    const [row] = await database().db.select().from(idempotencyKeys);
    assert.match(row!.body!, /^enc:v1:/);
    assert.ok(!row!.body!.includes(json(first).api_key), 'the key is not readable in the table');
  });

  it('an answer that no longer opens is absent, but its change was made: 409, never a second change or a 500', async () => {
    const { app, create } = await setup();
    await create(app, 'tampered');
    await create(app, 'other');
    const [other] = await database().db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'other'));
    // Another row's sealed body does not open here: it is bound to its own row.
    await database().db.update(idempotencyKeys).set({ body: other!.body }).where(eq(idempotencyKeys.key, 'tampered'));
    const keys = await keyCount();
    for (const retry of [await create(app, 'tampered'), await create(app, 'tampered')]) {
      assert.equal(retry.statusCode, 409, retry.body);
      assert.equal(json(retry).code, 'idempotency_answer_unreadable');
      assert.equal(retry.headers['idempotent-replayed'], undefined);
    }
    assert.equal(await keyCount(), keys, 'no second key');
  });
});
