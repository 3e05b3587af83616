/**
 * No 500 from a race (contract section 19): a unit of work that PostgreSQL
 * ends with a deadlock or a serialization failure runs again, up to
 * WRITE_RETRIES times, each attempt with its own after-commit hooks; past that
 * it answers 503 server_busy.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { CHANGE_WRITERS } from '../../src/data-layer.js';
import type { Db } from '../../src/db/database-core.js';
import { auditEvents, customers } from '../../src/db/schema.js';
import { createUnitOfWork, WRITE_RETRIES } from '../../src/db/unit-of-work.js';
import { AppError } from '../../src/errors.js';
import { OPERATOR_CONTEXT } from '../../src/lib/change-context.js';
import { ON_POSTGRES, useTestDatabase } from '../helpers/database.js';

/** The test's DAL: a rename, and a real error of PostgreSQL's with the SQLSTATE asked for. */
const bind = (on: Db) => ({
  async rename(id: string, name: string) {
    await on.update(customers).set({ name }).where(eq(customers.id, id));
  },
  async raise(state: '40P01' | '40001' | '23505') {
    await on.execute(sql.raw(`DO $$ BEGIN RAISE EXCEPTION 'raised by the test' USING ERRCODE = '${state}'; END $$`));
  },
});

describe('unit of work: retried after a deadlock or serialization failure', () => {
  const test = useTestDatabase();

  async function customer(): Promise<string> {
    const id = randomUUID();
    await test.current.database.db.insert(customers).values({ id, name: 'Before' });
    return id;
  }

  const nameOf = async (id: string) =>
    (await test.current.database.db.select({ name: customers.name }).from(customers).where(eq(customers.id, id)))[0]
      ?.name;

  it('runs the work again after a deadlock, and only the committed attempt runs its hooks and keeps its audit', async () => {
    const id = await customer();
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    let attempts = 0;
    const hooksRun: number[] = [];
    const result = await uow.write(OPERATOR_CONTEXT, async (scope) => {
      attempts += 1;
      const mine = attempts;
      await scope.dal.rename(id, `After ${mine}`);
      await scope.audit({ action: 'customer.renamed', customerId: id, targetType: 'customer', targetId: id });
      scope.afterCommit(() => hooksRun.push(mine));
      if (mine === 1) await scope.dal.raise('40P01');
      return mine;
    });
    assert.equal(result, 2);
    assert.equal(attempts, 2);
    assert.deepEqual(hooksRun, [2], "the rolled-back attempt's hook never runs");
    assert.equal(await nameOf(id), 'After 2');
    const audits = await test.current.database.db.select().from(auditEvents).where(eq(auditEvents.customerId, id));
    assert.equal(audits.length, 1);
  });

  it(`answers 503 server_busy after ${WRITE_RETRIES} retries of serialization failures, having written nothing`, async () => {
    const id = await customer();
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    let attempts = 0;
    let hookRan = false;
    await assert.rejects(
      uow.write(OPERATOR_CONTEXT, async (scope) => {
        attempts += 1;
        await scope.dal.rename(id, 'After');
        scope.afterCommit(() => {
          hookRan = true;
        });
        await scope.dal.raise('40001');
      }),
      (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'server_busy');
        assert.equal(err.status, 503);
        assert.equal(err.headers['retry-after'], '1');
        return true;
      },
    );
    assert.equal(attempts, 1 + WRITE_RETRIES);
    assert.equal(hookRan, false);
    assert.equal(await nameOf(id), 'Before');
  });

  it('does not retry other errors', async () => {
    const id = await customer();
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    let attempts = 0;
    await assert.rejects(
      uow.write(OPERATOR_CONTEXT, async (scope) => {
        attempts += 1;
        await scope.dal.raise('23505');
      }),
      (err: unknown) => !(err instanceof AppError),
    );
    assert.equal(attempts, 1);
    assert.equal(await nameOf(id), 'Before');
  });

  it('survives a real deadlock of two units of work: the victim runs again and both commit', {
    skip: !ON_POSTGRES && 'needs TEST_DATABASE_URL (one embedded connection cannot deadlock)',
  }, async () => {
    const [a, b] = [await customer(), await customer()];
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    let bothHoldTheirFirstRow: () => void = () => {};
    let holding = 0;
    const barrier = new Promise<void>((resolve) => {
      bothHoldTheirFirstRow = resolve;
    });
    let attempts = 0;
    /** Locks `first`, waits until the other holds its own first row (first attempt only), then locks `second`. */
    const crossing = (first: string, second: string, name: string) =>
      uow.write(OPERATOR_CONTEXT, async ({ dal }) => {
        attempts += 1;
        await dal.rename(first, name);
        if (++holding === 2) bothHoldTheirFirstRow();
        await barrier;
        await dal.rename(second, name);
        return name;
      });
    const results = await Promise.allSettled([crossing(a, b, 'one'), crossing(b, a, 'two')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled'],
      JSON.stringify(results.map((r) => (r.status === 'rejected' ? String(r.reason) : r.value))),
    );
    assert.equal(attempts, 3, 'one side was the deadlock victim and ran once more');
    // The victim ran last, so both rows carry its name.
    const names = [await nameOf(a), await nameOf(b)];
    assert.equal(names[0], names[1]);
  });
});
