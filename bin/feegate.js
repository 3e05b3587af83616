#!/usr/bin/env node
// The operator command line on the TypeScript sources, through tsx. `npm start`
// runs the same code bundled (scripts/build.mjs), without the loader's memory.
// Tracing, when configured, starts before the service's modules load (src/lib/tracing.ts).
import { register } from 'tsx/esm/api';

register();
await (await import('../src/lib/tracing.ts')).startTracing();
const { main } = await import('../src/cli.ts');
await main();
