// Runs argon2 for the main thread at the lowest CPU priority: under a login
// storm, hashing takes whatever CPU is left and never the event loop's share.
// Plain JavaScript so that it loads in a worker without a TypeScript loader.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { hashSync, verifySync } from '@node-rs/argon2';

try {
  // On Linux the nice value is per thread: this lowers this worker only.
  setPriority(19);
} catch {
  // Not permitted here: hashing still runs off the event loop.
}

parentPort.on('message', ({ id, op, password, phc, options }) => {
  try {
    const result = op === 'hash' ? hashSync(password, options) : verifySync(phc, password);
    parentPort.postMessage({ id, result });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
