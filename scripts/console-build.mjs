/**
 * Builds the console (console/ → dist/console) with Vite, unless the last build
 * is newer than every file it is made from: a warm `npm start` then costs
 * nothing for it (docs/console.md). Shared by scripts/build.mjs and the tests.
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
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

/** Renames, where `from` being gone (another build moved it first) is not an error. */
function renameIfPresent(from, to) {
  try {
    renameSync(from, to);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
}

/**
 * Builds dist/console when it is stale; says whether it did. The build is made
 * beside dist/console and renamed into place whole, because processes that start
 * at once (test files, a bench beside a server) may each build: Vite's own build
 * empties its output first, and a server registering /console meanwhile found no
 * index.html and served no console. Builds of the same sources are identical, so
 * when two finish together the second's is dropped.
 */
export async function buildConsoleIfStale() {
  if (!consoleBuildIsStale()) return false;
  const { build } = await import('vite');
  const staging = `${built}.building-${process.pid}`;
  const retired = `${built}.retired-${process.pid}`;
  try {
    await build({
      configFile: path.join(root, 'console/vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: staging, emptyOutDir: true },
    });
    renameIfPresent(built, retired);
    try {
      renameSync(staging, built);
    } catch (error) {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(retired, { recursive: true, force: true });
  }
  return true;
}
