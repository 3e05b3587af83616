/** `npm start` builds the console only when its sources changed, so a warm start pays nothing for it. */
import assert from 'node:assert/strict';
import { statSync, utimesSync } from 'node:fs';
import { describe, it } from 'node:test';
import { buildConsoleIfStale, consoleBuildIsStale } from '../../scripts/console-build.mjs';

describe('console build', () => {
  it('is skipped while dist/console is newer than every source, and redone once one changes', async () => {
    await buildConsoleIfStale();
    assert.equal(consoleBuildIsStale(), false);
    assert.equal(await buildConsoleIfStale(), false, 'nothing changed: no build');

    const source = 'console/index.html';
    const { atime, mtime } = statSync(source);
    try {
      const later = new Date(Date.now() + 60_000);
      utimesSync(source, later, later);
      assert.equal(consoleBuildIsStale(), true, 'a changed source makes the build stale');
    } finally {
      utimesSync(source, atime, mtime);
    }
    assert.equal(consoleBuildIsStale(), false);
  });
});
