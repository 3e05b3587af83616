import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { findInPackage, openDatabase, queryRows, sql } from '../../src/db/database.js';
import { PGLITE_TEMPLATE, PGLITE_VERSION } from '../../src/db/pglite.js';
import { customers } from '../../src/db/schema.js';

async function systemIdentifier(dataDir: string): Promise<string> {
  const database = await openDatabase({ dataDir });
  try {
    const [row] = await queryRows<{ id: string }>(
      database.db,
      sql`SELECT system_identifier::text AS id FROM pg_control_system()`,
    );
    return row!.id;
  } finally {
    await database.close();
  }
}

describe('embedded database', () => {
  it('runs PGlite with 16MB of shared buffers, not the 128MB default held in the service memory', async () => {
    const database = await openDatabase({ dataDir: 'memory://' });
    try {
      const rows = await queryRows<{ shared_buffers: string }>(database.db, sql`SHOW shared_buffers`);
      assert.deepEqual(rows, [{ shared_buffers: '16MB' }]);
    } finally {
      await database.close();
    }
  });

  it(`ships the initdb template of the installed PGlite (${PGLITE_VERSION}); after an upgrade run scripts/pglite-template.ts`, () => {
    assert.ok(findInPackage(PGLITE_TEMPLATE), `${PGLITE_TEMPLATE} is missing`);
  });

  it('unpacks a new data directory from the template instead of running initdb, and keeps what is written there', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'feegate-embedded-'));
    try {
      const [first, second] = [path.join(root, 'a'), path.join(root, 'b')];
      // initdb draws a random system identifier; two copies of one template share it.
      assert.equal(await systemIdentifier(first), await systemIdentifier(second));
      assert.ok(existsSync(path.join(first, 'PG_VERSION')));
      const database = await openDatabase({ dataDir: first });
      await database.migrate();
      await database.db.insert(customers).values({ name: 'Persisted' });
      await database.close();
      const reopened = await openDatabase({ dataDir: first });
      try {
        assert.deepEqual(
          (await reopened.db.select({ name: customers.name }).from(customers)).map((c) => c.name),
          ['Persisted'],
        );
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
