/**
 * The in-memory counts an instance keeps are bounded (oldest dropped first),
 * so a flood of user names or client addresses cannot grow them without end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SILENT_LOG } from '../../src/lib/log.js';
import { createSharedCounters } from '../../src/lib/shared-counters.js';

test('an instance keeps at most localEntries counts, dropping the least recently counted', async () => {
  const counters = createSharedCounters({
    redis: undefined,
    prefix: 't:',
    name: 't',
    log: SILENT_LOG,
    localEntries: 3,
  });
  const windowMs = 60_000;
  for (const key of ['a', 'b', 'c']) await counters.incr(key, windowMs);
  assert.equal((await counters.incr('a', windowMs)).current, 2, 'a is still counted while within the bound');
  await counters.incr('d', windowMs); // the fourth key: b, the least recently counted, is dropped
  assert.equal((await counters.incr('b', windowMs)).current, 1, 'b was dropped and counts from 1 again');
  assert.equal((await counters.incr('a', windowMs)).current, 3, 'a, counted recently, is kept');
});
