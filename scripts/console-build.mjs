/**
 * Builds the console (console/ → dist/console) with Vite, unless the last build
 * is newer than every file it is made from: a warm `npm start` then costs
 * nothing for it (docs/console.md). Shared by scripts/build.mjs and the tests.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const builtIndex = path.join(root, 'dist/console/index.html');
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

/** Builds dist/console when it is stale; says whether it did. */
export async function buildConsoleIfStale() {
  if (!consoleBuildIsStale()) return false;
  const { build } = await import('vite');
  await build({ configFile: path.join(root, 'console/vite.config.ts'), logLevel: 'warn' });
  return true;
}
