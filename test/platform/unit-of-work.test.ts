/**
 * The one write path (src/db/unit-of-work.ts): a change's rows, its audit
 * record, its domain event and its notice commit together or not at all, and
 * after-commit hooks run only once it has committed.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { CHANGE_WRITERS } from '../../src/data-layer.js';
import type { Db } from '../../src/db/database-core.js';
import { auditEvents, customers, domainEvents } from '../../src/db/schema.js';
import { createUnitOfWork, type WriteScope } from '../../src/db/unit-of-work.js';
import { OPERATOR_CONTEXT } from '../../src/lib/change-context.js';
import { useTestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';

/** A DAL for the test: the one write it needs. */
const bind = (on: Db) => ({
  async renameCustomer(id: string, name: string) {
    await on.update(customers).set({ name }).where(eq(customers.id, id));
  },
});

describe('unit of work', () => {
  const test = useTestDatabase();

  async function customer(): Promise<string> {
    const id = randomUUID();
    await test.current.database.db.insert(customers).values({ id, name: 'Before' });
    return id;
  }

  async function state(id: string) {
    const { db } = test.current.database;
    const [row] = await db.select({ name: customers.name }).from(customers).where(eq(customers.id, id));
    const audits = await db.select().from(auditEvents).where(eq(auditEvents.customerId, id));
    const events = await db.select().from(domainEvents).where(eq(domainEvents.customerId, id));
    return { name: row?.name, audits, events };
  }

  async function change(id: string, scope: WriteScope<ReturnType<typeof bind>>) {
    await scope.dal.renameCustomer(id, 'After');
    await scope.audit({ action: 'customer.renamed', customerId: id, targetType: 'customer', targetId: id });
    await scope.emit({ type: 'WEBHOOK_TEST', customerId: id, data: { webhook_id: id, message: 'renamed' } });
  }

  it('commits the change, its audit record and its event together, then runs the after-commit hooks', async () => {
    const id = await customer();
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    const seenByHook: Array<Awaited<ReturnType<typeof state>>> = [];
    await uow.write({ ...OPERATOR_CONTEXT, requestId: 'req-1' }, async (scope) => {
      await change(id, scope);
      scope.afterCommit(() => void state(id).then((s) => seenByHook.push(s)));
    });
    const after = await state(id);
    assert.equal(after.name, 'After');
    assert.equal(after.audits.length, 1);
    assert.equal(after.audits[0]!.requestId, 'req-1');
    assert.equal(after.events.length, 1);
    assert.deepEqual(after.events[0]!.data, { webhook_id: id, message: 'renamed' });
    assert.equal(after.events[0]!.requestId, 'req-1');
    await waitFor(() => seenByHook.length === 1, 'the after-commit hook ran');
    assert.equal(seenByHook[0]!.events.length, 1, 'the hook runs after the commit, when the event is visible');
  });

  it('rolls everything back when the work fails, and never runs the hooks', async () => {
    const id = await customer();
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    let hookRan = false;
    await assert.rejects(
      uow.write(OPERATOR_CONTEXT, async (scope) => {
        await change(id, scope);
        scope.afterCommit(() => {
          hookRan = true;
        });
        throw new Error('refused after writing');
      }),
      /refused after writing/,
    );
    assert.deepEqual(await state(id), { name: 'Before', audits: [], events: [] });
    assert.equal(hookRan, false);
  });

  it('delivers a notice only when the change commits', async () => {
    const { database } = test.current;
    const channel = `feegate_test_${randomUUID().slice(0, 8)}`;
    const received: string[] = [];
    const unlisten = await database.listen(channel, { onMessage: (payload) => received.push(payload) });
    try {
      const uow = createUnitOfWork(database.db, bind, CHANGE_WRITERS);
      await assert.rejects(
        uow.write(OPERATOR_CONTEXT, async (scope) => {
          await scope.notify({ channel, payload: 'rolled back' });
          throw new Error('no');
        }),
      );
      await uow.write(OPERATOR_CONTEXT, (scope) => scope.notify({ channel, payload: 'committed' }));
      await waitFor(() => received.length > 0, 'the committed notice arrived');
      assert.deepEqual(received, ['committed']);
    } finally {
      await unlisten();
    }
  });

  it('refuses writes in a snapshot', async () => {
    const id = await customer();
    const uow = createUnitOfWork(test.current.database.db, bind, CHANGE_WRITERS);
    await assert.rejects(uow.snapshot((dal) => dal.renameCustomer(id, 'After')));
    assert.equal((await state(id)).name, 'Before');
  });
});
