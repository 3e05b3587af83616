import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase, queryRows, sql } from '../../src/db/database.js';

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
});
