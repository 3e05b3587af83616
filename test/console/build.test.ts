/**
 * `npm start` builds the console only when its sources changed, so a warm start pays nothing for it;
 * builds running at once swap their output in whole.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { buildConsoleIfStale, consoleBuildIsStale } from '../../scripts/console-build.mjs';

const moduleUrl = new URL('../../scripts/console-build.mjs', import.meta.url).href;
const built = fileURLToPath(new URL('../../dist/console', import.meta.url));
const builtIndex = path.join(built, 'index.html');
const lockFile = fileURLToPath(new URL('../../dist/.console-build.lock', import.meta.url));

/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

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

  it('builds once for processes that find it stale at once, never leaving dist/console without its index.html', async () => {
    await buildConsoleIfStale();
    const past = new Date(Date.now() - 86_400_000);
    utimesSync(builtIndex, past, past);
    assert.equal(consoleBuildIsStale(), true, 'an index older than its sources is stale');
    // A build killed mid-way left its staging directory and its lock: both are taken over.
    mkdirSync(`${built}.building`, { recursive: true });
    writeFileSync(lockFile, String(deadPid()));
    const builders = Array.from({ length: 3 }, () =>
      spawn(
        process.execPath,
        [
          '-e',
          `import(${JSON.stringify(moduleUrl)}).then(async (m) => process.stdout.write(String(await m.buildConsoleIfStale())))`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    const said = builders.map(async (child) => {
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      const [code] = await once(child, 'exit');
      return { code, built: out === 'true' };
    });
    // What a server registering /console while they build would see (src/plugins/console.ts).
    let seenWithoutIndex = 0;
    let looks = 0;
    const watch = setInterval(() => {
      looks++;
      if (existsSync(built) && !existsSync(builtIndex)) seenWithoutIndex++;
    }, 1);
    const outcomes = await Promise.all(said);
    clearInterval(watch);
    assert.deepEqual(
      outcomes.map((o) => o.code),
      [0, 0, 0],
    );
    assert.ok(looks > 100, `looked ${looks} times while they built`);
    assert.equal(outcomes.filter((o) => o.built).length, 1, 'one built, the others waited and found it built');
    assert.equal(seenWithoutIndex, 0, 'dist/console was seen without its index.html');
    assert.equal(consoleBuildIsStale(), false);
    assert.deepEqual(
      readdirSync(path.dirname(built)).filter((name) => name.startsWith('console.') || name === '.console-build.lock'),
      [],
      'no staging build or lock left behind',
    );
  });
});
