#!/usr/bin/env node
/**
 * `npm run build` (and before `npm start`): the service as one JavaScript bundle,
 * dist/feegate.mjs (scripts/service-bundle.mjs). Running the sources through tsx
 * keeps the TypeScript loader in every process's memory (docs/performance.md);
 * `npm run feegate`, the bench's in-process parts and the tests (but for the
 * command line's, test/helpers/cli.ts) still run the sources.
 */
import { fileURLToPath } from 'node:url';
import { buildConsoleIfStale } from './console-build.mjs';
import { bundleService } from './service-bundle.mjs';

await bundleService(fileURLToPath(new URL('../dist', import.meta.url)));

// The back-office console (console/, served at /console by src/plugins/console.ts),
// rebuilt only when its sources changed.
await buildConsoleIfStale();
