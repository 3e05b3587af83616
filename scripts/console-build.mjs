/**
 * Builds the console (console/ → dist/console) with Vite, unless the last build
 * is newer than every file it is made from: a warm `npm start` then costs
 * nothing for it (docs/console.md). Shared by scripts/build.mjs and the tests.
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { whileHoldingLock } from './build-lock.mjs';

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

/** The directory whose lock the one process building the console holds (scripts/build-lock.mjs). */
const lockDir = path.join(root, 'dist/.console-build.lock');

/**
 * Builds dist/console when it is stale; says whether it did. Processes that start
 * at once (test files, a bench beside a server) may each find it stale: one builds
 * while the others wait, then find it built. The build is made beside dist/console
 * and renamed into place, since Vite empties its output first and a server
 * registering /console meanwhile would find no index.html and serve no console.
 */
export async function buildConsoleIfStale() {
  if (!consoleBuildIsStale()) return false;
  return whileHoldingLock(lockDir, async () => {
    const staging = `${built}.building`;
    const retired = `${built}.retired`;
    // Left by a build that was killed (no other build runs while this one holds the lock): one killed
    // between its two renames left the last whole build retired, which goes back in place first.
    if (!existsSync(built) && existsSync(retired)) renameSync(retired, built);
    for (const leftover of [staging, retired]) rmSync(leftover, { recursive: true, force: true });
    // Built by another process while this one waited, or put back just now.
    if (!consoleBuildIsStale()) return false;
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
