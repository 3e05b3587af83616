#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: one artefact, no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
await main();
