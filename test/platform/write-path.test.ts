/**
 * One write path without exceptions (docs/design.md, "Reads on the pool, writes
 * in a unit of work"): every DAL method that is not one of its named reads is a
 * write, and the pool reaches none of them but the sanctioned writes
 * docs/design.md lists with their reasons; everything else runs in a unit of
 * work. Underneath, the database the pool's reads run on refuses any statement
 * that writes or locks, and the rest of the suite exercises it through every
 * service.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { createDataLayer, type Dals, READS, SANCTIONED_WRITES } from '../../src/data-layer.js';
import { queryRows } from '../../src/db/database-core.js';
import { isReadOnlyStatement, readOnly, WriteOutsideUnitOfWork } from '../../src/db/read-only.js';
import { customers } from '../../src/db/schema.js';
import { useTestDatabase } from '../helpers/database.js';
import { read, sourceFiles } from '../helpers/repository-text.js';
import { testSealedValues } from '../helpers/secrets.js';

const DAL_NAMES = Object.keys(READS) as Array<keyof Dals>;
const sanctioned = (name: keyof Dals): readonly string[] =>
  (SANCTIONED_WRITES as Partial<Record<keyof Dals, readonly string[]>>)[name] ?? [];

/** `dal.method` of every sanctioned write docs/design.md lists under "Sanctioned writes". */
function documentedSanctioned(): string[] {
  const section =
    read('docs/design.md')
      .split('Sanctioned writes')[1]
      ?.split(/\n- \*\*/)[0] ?? '';
  return [...section.matchAll(/^\s+- `(\w+\.\w+)`: \S/gm)].map((match) => match[1]!).sort();
}

describe('one write path', () => {
  const test = useTestDatabase();

  /** Every method of every DAL, as a unit of work binds them, by DAL. */
  async function allMethods(): Promise<Map<keyof Dals, string[]>> {
    const { uow } = createDataLayer(test.current.database, testSealedValues());
    return uow.snapshot(async (dal) => new Map(DAL_NAMES.map((name) => [name, Object.keys(dal[name]).sort()])));
  }

  it('names reads that exist, and leaves every DAL out of none', async () => {
    const methods = await allMethods();
    for (const name of DAL_NAMES) {
      const unknown = [...READS[name], ...sanctioned(name)].filter((m) => !methods.get(name)!.includes(m));
      assert.deepEqual(unknown, [], `${name}: no such methods`);
    }
  });

  it('the pool reaches every read, and of the writes only the sanctioned ones', async () => {
    const methods = await allMethods();
    const layer = createDataLayer(test.current.database, testSealedValues());
    assert.deepEqual(Object.keys(layer).sort(), ['dal', 'uow'], 'the data layer has two doors');
    assert.deepEqual(Object.keys(layer.dal).sort(), [...DAL_NAMES].sort());
    for (const name of DAL_NAMES) {
      const writes = methods.get(name)!.filter((m) => !(READS[name] as readonly string[]).includes(m));
      const onPool = Object.keys(layer.dal[name]);
      assert.deepEqual(
        onPool.filter((m) => writes.includes(m)).sort(),
        [...sanctioned(name)].sort(),
        `${name}: writes reachable on the pool`,
      );
      assert.deepEqual(onPool.sort(), [...READS[name], ...sanctioned(name)].sort(), `${name}: the pool's methods`);
    }
  });

  it('docs/design.md gives every sanctioned write its reason, and lists no other', () => {
    const named = DAL_NAMES.flatMap((name) => sanctioned(name).map((m) => `${name}.${m}`)).sort();
    assert.deepEqual(documentedSanctioned(), named);
  });

  it('nothing but the data layer holds the database: no Db on the pool outside src/db/ and src/data-layer.ts', () => {
    const holders = sourceFiles()
      .filter((file) => file.startsWith('src/') && !file.startsWith('src/db/') && file !== 'src/data-layer.ts')
      .filter((file) =>
        /\bdatabase\.db\b|\.db\.(?:insert|update|delete|execute|select|transaction)\b/.test(read(file)),
      );
    assert.deepEqual(holders, []);
  });
});

describe('the read-only database of the pool', () => {
  const test = useTestDatabase();

  const customer = async () => {
    const id = randomUUID();
    await test.current.database.db.insert(customers).values({ id, name: 'Before' });
    return id;
  };
  const nameOf = async (id: string) =>
    (await test.current.database.db.select().from(customers).where(eq(customers.id, id)))[0]?.name;

  it('refuses every statement that writes or locks, before sending it: nothing changes', async () => {
    const id = await customer();
    const db = readOnly(test.current.database.db);
    const refused: Array<[string, () => Promise<unknown>]> = [
      [
        'an insert',
        () =>
          db
            .insert(customers)
            .values({ id: randomUUID(), name: 'New' })
            .then(() => {}),
      ],
      [
        'an update',
        () =>
          db
            .update(customers)
            .set({ name: 'After' })
            .where(eq(customers.id, id))
            .then(() => {}),
      ],
      [
        'a delete',
        () =>
          db
            .delete(customers)
            .where(eq(customers.id, id))
            .then(() => {}),
      ],
      ['an update as SQL', () => db.execute(sql`UPDATE customers SET name = 'After' WHERE id = ${id}`)],
      ['a delete in lower case', () => db.execute(sql`delete from customers where id = ${id}`)],
      [
        'a write in a CTE',
        () =>
          db.execute(
            sql`WITH x AS (UPDATE customers SET name = 'After' WHERE id = ${id} RETURNING id) SELECT * FROM x`,
          ),
      ],
      [
        'a write in a CTE built by Drizzle',
        () => {
          const changed = db
            .$with('changed')
            .as(db.update(customers).set({ name: 'After' }).where(eq(customers.id, id)).returning());
          return db
            .with(changed)
            .select()
            .from(changed)
            .then(() => {});
        },
      ],
      ['a row lock', () => db.execute(sql`SELECT id FROM customers WHERE id = ${id} FOR UPDATE`)],
      ['a weaker row lock', () => db.execute(sql`SELECT id FROM customers WHERE id = ${id} FOR NO KEY UPDATE`)],
      ['a share lock', () => db.execute(sql`SELECT id FROM customers WHERE id = ${id} FOR KEY SHARE`)],
      [
        'a lock by Drizzle',
        () =>
          db
            .select()
            .from(customers)
            .for('update')
            .then(() => {}),
      ],
      ['a notice', () => db.execute(sql`SELECT pg_notify('feegate-test', 'x')`)],
      ['an advisory lock', () => db.execute(sql`SELECT pg_advisory_xact_lock(1)`)],
      ['a setting', () => db.execute(sql`SET LOCAL enable_bitmapscan = off`)],
      ['a setting by function', () => db.execute(sql`SELECT set_config('application_name', 'x', false)`)],
      ['a table made by SELECT INTO', () => db.execute(sql`SELECT * INTO customers_copy FROM customers`)],
      ['a second statement', () => db.execute(sql.raw(`SELECT 1; UPDATE customers SET name = 'After'`))],
      [
        'a prepared insert',
        () => db.insert(customers).values({ id: randomUUID(), name: 'New' }).prepare('probe').execute(),
      ],
      ['a transaction', () => db.transaction(async (tx) => tx.execute(sql`SELECT 1`))],
    ];
    for (const [what, run] of refused) await assert.rejects(async () => run(), WriteOutsideUnitOfWork, what);
    assert.equal(await nameOf(id), 'Before');
    const [row] = await queryRows<{ n: number }>(
      test.current.database.db,
      sql`SELECT count(*)::int AS n FROM customers`,
    );
    assert.equal(row?.n, 1, 'no row added');
  });

  it('lets every read through, whatever its literals and identifiers say', async () => {
    const id = await customer();
    const db = readOnly(test.current.database.db);
    assert.equal((await db.select().from(customers).where(eq(customers.id, id)))[0]?.name, 'Before');
    assert.equal(await db.$count(customers), 1);
    await db.execute(sql`WITH c AS (SELECT id FROM customers) SELECT count(*) FROM c`);
    await db.execute(sql`SELECT 'insert into x; update' AS "delete", ${'UPDATE customers'}::text AS v -- update`);
    await db.execute(sql`/* delete */ SELECT $$update$$ AS "for update"`);
    assert.equal(await nameOf(id), 'Before');
  });

  it('reads statements by their words', () => {
    assert.equal(isReadOnlyStatement('select "updated_at" from "api_keys"'), true);
    assert.equal(isReadOnlyStatement('SELECT updated_at, deleted FROM x'), true);
    assert.equal(isReadOnlyStatement('  VALUES (1)'), true);
    assert.equal(isReadOnlyStatement('SELECT 1;'), true);
    assert.equal(isReadOnlyStatement('insert into x values (1)'), false);
    assert.equal(isReadOnlyStatement('MERGE INTO x USING y ON true WHEN MATCHED THEN DO NOTHING'), false);
    assert.equal(isReadOnlyStatement('TRUNCATE x'), false);
    assert.equal(isReadOnlyStatement('SELECT nextval($1)'), false);
    assert.equal(isReadOnlyStatement('COPY x TO STDOUT'), false);
    assert.equal(isReadOnlyStatement('LISTEN x'), false);
  });
});
