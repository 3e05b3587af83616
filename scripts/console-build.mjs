/**
 * Builds the console (console/ → dist/console) with Vite, unless the last build
 * is newer than every file it is made from: a warm `npm start` then costs
 * nothing for it (docs/console.md). Shared by scripts/build.mjs and the tests.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = path.join(root, 'dist/console');
const builtIndex = path.join(built, 'index.html');
/** What a console build is made from: its sources, the typed client, and the installed Vite (the lock file). */
const SOURCES = ['console', 'clients/typescript', 'package-lock.json'];

function newestChange(file) {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(file)) newest = Math.max(newest, newestChange(path.join(file, entry)));
  return newest;
}

/** True when dist/console is missing or older than any of its sources. */
export function consoleBuildIsStale() {
  if (!existsSync(builtIndex)) return true;
  const built = statSync(builtIndex).mtimeMs;
  return SOURCES.some((source) => newestChange(path.join(root, source)) > built);
}

/** Renames, where `from` being gone (no build yet) is not an error. */
function renameIfPresent(from, to) {
  try {
    renameSync(from, to);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
}

/** Held by the one process building the console; it holds the holder's pid. */
const lockFile = path.join(root, 'dist/.console-build.lock');

/** Whether the lock's holder has died (a build killed mid-way); a lock not yet written is held. */
function lockAbandoned() {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8'));
    if (!pid) return Date.now() - statSync(lockFile).mtimeMs > 60_000;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

/**
 * Runs `work` as the only process building the console. An exclusive create is
 * the lock (a dependency for this one build step would be more than it needs);
 * one left by a dead process is taken over.
 */
async function whileHoldingBuildLock(work) {
  mkdirSync(path.dirname(lockFile), { recursive: true });
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (lockAbandoned()) rmSync(lockFile, { force: true });
      else await sleep(100);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

/**
 * Builds dist/console when it is stale; says whether it did. Processes that start
 * at once (test files, a bench beside a server) may each find it stale: one builds
 * while the others wait, then find it built. The build is made beside dist/console
 * and renamed into place, since Vite empties its output first and a server
 * registering /console meanwhile would find no index.html and serve no console.
 */
export async function buildConsoleIfStale() {
  if (!consoleBuildIsStale()) return false;
  return whileHoldingBuildLock(async () => {
    if (!consoleBuildIsStale()) return false;
    const staging = `${built}.building`;
    const retired = `${built}.retired`;
    // Left by a build that was killed: no other build runs while this one holds the lock.
    for (const leftover of [staging, retired]) rmSync(leftover, { recursive: true, force: true });
    const { build } = await import('vite');
    try {
      await build({
        configFile: path.join(root, 'console/vite.config.ts'),
        logLevel: 'warn',
        build: { outDir: staging, emptyOutDir: true },
      });
      renameIfPresent(built, retired);
      renameSync(staging, built);
    } finally {
      rmSync(staging, { recursive: true, force: true });
      rmSync(retired, { recursive: true, force: true });
    }
    return true;
  });
}
