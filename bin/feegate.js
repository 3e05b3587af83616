#!/usr/bin/env node
// The operator command line on the TypeScript sources, through tsx. `npm start`
// runs the same code bundled (scripts/build.mjs), without the loader's memory.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
await main();
