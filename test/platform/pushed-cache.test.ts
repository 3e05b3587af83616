/**
 * The pushed cache's shared reads (lib/pushed-cache.ts getOrLoad): misses of one
 * key under one token make one read; a read that raced an invalidation is neither
 * shared with later requests nor kept; with the channel down each request reads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPushedCache } from '../../src/lib/pushed-cache.js';

/** A read that answers when told to, counting how often it was started. */
function gatedReads() {
  let started = 0;
  const gates: Array<(value: string) => void> = [];
  return {
    started: () => started,
    load: () => {
      started++;
      return new Promise<string>((resolve) => gates.push(resolve));
    },
    answer: (value: string) => gates.shift()!(value),
  };
}

const connectedCache = () => {
  const cache = createPushedCache<string>({ ttlMs: 60_000, maxEntries: 10, name: 'test' });
  cache.setConnected(true);
  return cache;
};

describe('getOrLoad', () => {
  it('answers twenty concurrent misses of one key with one read, then from memory', async () => {
    const cache = connectedCache();
    const reads = gatedReads();
    const answers = Array.from({ length: 20 }, () => cache.getOrLoad('page', 'customer', reads.load));
    assert.equal(reads.started(), 1);
    reads.answer('v1');
    assert.deepEqual(new Set(await Promise.all(answers)), new Set(['v1']));
    assert.equal(await cache.getOrLoad('page', 'customer', reads.load), 'v1');
    assert.equal(reads.started(), 1, 'kept');
    // Another key is read for itself.
    const other = cache.getOrLoad('other', 'customer', reads.load);
    reads.answer('w1');
    assert.equal(await other, 'w1');
    assert.equal(reads.started(), 2);
  });

  it('does not hand a read that began before an invalidation to a request after it, nor keep it', async () => {
    const cache = connectedCache();
    const reads = gatedReads();
    const before = cache.getOrLoad('page', 'customer', reads.load);
    cache.invalidate('customer');
    const after = cache.getOrLoad('page', 'customer', reads.load);
    assert.equal(reads.started(), 2, 'the request after the change reads again');
    reads.answer('stale');
    reads.answer('fresh');
    assert.equal(await before, 'stale');
    assert.equal(await after, 'fresh');
    assert.equal(await cache.getOrLoad('page', 'customer', reads.load), 'fresh', 'only the fresh read is kept');
    assert.equal(reads.started(), 2);
  });

  it('reads for each request while the channel is down, and keeps nothing', async () => {
    const cache = createPushedCache<string>({ ttlMs: 60_000, maxEntries: 10, name: 'test' });
    const reads = gatedReads();
    const answers = [cache.getOrLoad('page', 'c', reads.load), cache.getOrLoad('page', 'c', reads.load)];
    assert.equal(reads.started(), 2);
    reads.answer('a');
    reads.answer('b');
    assert.deepEqual(await Promise.all(answers), ['a', 'b']);
  });

  it('hands a failed read to those who waited on it, keeps nothing, and reads again next time', async () => {
    const cache = connectedCache();
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('database away');
    };
    const results = await Promise.allSettled([
      cache.getOrLoad('page', 'c', failing),
      cache.getOrLoad('page', 'c', failing),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(calls, 1);
    assert.equal(await cache.getOrLoad('page', 'c', async () => 'back'), 'back');
  });
});
