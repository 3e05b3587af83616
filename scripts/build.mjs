#!/usr/bin/env node
/**
 * `npm run build` (and before `npm start`): the service as one JavaScript bundle,
 * dist/feegate.mjs, with the npm packages left as imports. Running the sources
 * through tsx keeps the TypeScript loader in every process's memory
 * (docs/performance.md);
 * tests, the bench's in-process parts and `npm run feegate` still run the sources.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildConsoleIfStale } from './console-build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist`;
mkdirSync(outdir, { recursive: true });
await build({
  stdin: {
    contents: "import { main } from './src/cli.ts';\nawait main();\n",
    resolveDir: root,
    sourcefile: 'feegate-entry.ts',
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  packages: 'external',
  outfile: `${outdir}/feegate.mjs`,
  sourcemap: 'linked',
  logLevel: 'warning',
});
// Worker threads loaded by URL next to the bundle (src/features/auth/argon2-pool.ts,
// src/db/pglite-rpc.ts), so they are copied, not bundled.
copyFileSync(`${root}src/features/auth/argon2-worker.mjs`, `${outdir}/argon2-worker.mjs`);
copyFileSync(`${root}src/db/pglite-worker.mjs`, `${outdir}/pglite-worker.mjs`);

// The back-office console (console/, served at /console by src/plugins/console.ts),
// rebuilt only when its sources changed.
await buildConsoleIfStale();
