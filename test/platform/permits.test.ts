/** The counting semaphore that bounds the merchant listing's pages read at once (src/lib/permits.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPermits } from '../../src/lib/permits.js';

describe('permits', () => {
  it('lets `count` holders in at once and the rest in the order they asked, each release counted once', async () => {
    const permits = createPermits(2);
    const first = await permits.acquire();
    const second = await permits.acquire();
    const order: string[] = [];
    const third = permits.acquire().then((release) => {
      order.push('third');
      return release;
    });
    const fourth = permits.acquire().then((release) => {
      order.push('fourth');
      return release;
    });
    assert.equal(permits.waiting(), 2);
    first();
    first(); // twice: still one permit given back
    const releaseThird = await third;
    assert.deepEqual(order, ['third']);
    assert.equal(permits.waiting(), 1, 'a second release of the same permit lets nobody else in');
    second();
    (await fourth)();
    releaseThird();
    // All given back: two may enter at once again, not more.
    await permits.acquire();
    await permits.acquire();
    assert.equal(permits.waiting(), 0);
    void permits.acquire();
    assert.equal(permits.waiting(), 1);
  });

  it('drops a waiter whose signal aborts: it never gets a permit, and the next one does', async () => {
    const permits = createPermits(1);
    const holder = await permits.acquire();
    const gone = new AbortController();
    const abandoned = permits.acquire(gone.signal);
    const next = permits.acquire();
    gone.abort(new Error('hung up'));
    await assert.rejects(abandoned, /hung up/);
    assert.equal(permits.waiting(), 1);
    holder();
    (await next)();
    await assert.rejects(permits.acquire(gone.signal), /hung up/, 'an aborted signal never waits');
    assert.equal(permits.waiting(), 0);
  });
});
