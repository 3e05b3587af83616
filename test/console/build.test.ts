/**
 * `npm start` builds the console only when its sources changed, so a warm start pays nothing for it;
 * builds running at once swap their output in whole.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildConsoleIfStale, consoleBuildIsStale } from '../../scripts/console-build.mjs';

const moduleUrl = new URL('../../scripts/console-build.mjs', import.meta.url).href;
const built = fileURLToPath(new URL('../../dist/console', import.meta.url));
const builtIndex = path.join(built, 'index.html');
const lockDir = fileURLToPath(new URL('../../dist/.console-build.lock', import.meta.url));

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
    // A build killed mid-way left its staging directory and its ticket in the lock, whose time has gone stale: both are cleared.
    mkdirSync(`${built}.building`, { recursive: true });
    mkdirSync(lockDir);
    const deadTicket = path.join(lockDir, 'ticket.1.killed-builder');
    writeFileSync(deadTicket, '');
    const stale = new Date(Date.now() - 120_000);
    utimesSync(deadTicket, stale, stale);
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
      // One lookup of the path: two (the directory, then its index) could fall either side of a rename.
      try {
        if (!readdirSync(built).includes('index.html')) seenWithoutIndex++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
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
    const leftovers = () =>
      readdirSync(path.dirname(built)).filter((name) => name.startsWith('console.') || name === '.console-build.lock');
    // Test files starting meanwhile (console pages, security headers) found the console stale too and queued for the
    // lock after the builders: they find it built and leave, the last removing the lock's directory.
    for (const until = Date.now() + 30_000; leftovers().length > 0 && Date.now() < until; ) await sleep(100);
    assert.deepEqual(leftovers(), [], 'no staging build or lock left behind');
  });

  it('puts back the last whole build that a build killed between its renames left retired, building nothing', async () => {
    // In a copy of the script's surroundings: the checkout's own dist/console may be serving other test files.
    const copy = mkdtempSync(path.join(os.tmpdir(), 'feegate-console-build-'));
    try {
      mkdirSync(path.join(copy, 'scripts'));
      copyFileSync(fileURLToPath(moduleUrl), path.join(copy, 'scripts/console-build.mjs'));
      copyFileSync(
        fileURLToPath(new URL('../../scripts/build-lock.mjs', import.meta.url)),
        path.join(copy, 'scripts/build-lock.mjs'),
      );
      symlinkSync(fileURLToPath(new URL('../../node_modules', import.meta.url)), path.join(copy, 'node_modules'));
      for (const source of ['console', 'clients/typescript']) mkdirSync(path.join(copy, source), { recursive: true });
      writeFileSync(path.join(copy, 'package-lock.json'), '{}');
      mkdirSync(path.join(copy, 'dist/console.retired'), { recursive: true });
      writeFileSync(path.join(copy, 'dist/console.retired/index.html'), '<!doctype html>');
      const script = pathToFileURL(path.join(copy, 'scripts/console-build.mjs')).href;
      const run = spawn(
        process.execPath,
        [
          '-e',
          `import(${JSON.stringify(script)}).then(async (m) => process.stdout.write(String(await m.buildConsoleIfStale())))`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let said = '';
      run.stdout.on('data', (chunk) => (said += chunk));
      assert.deepEqual(await once(run, 'exit'), [0, null]);
      assert.equal(said, 'false', 'the retired build is whole and current: no build');
      assert.ok(existsSync(path.join(copy, 'dist/console/index.html')), 'put back');
      assert.equal(existsSync(path.join(copy, 'dist/console.retired')), false);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
