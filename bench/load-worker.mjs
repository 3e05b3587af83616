/**
 * One autocannon load in its own thread at a lower CPU priority, started by
 * `runLoadInBackground` (bench/load.ts). On a 2-core machine the load generator
 * shares the cores with the service; niced, it stands in for clients on other
 * machines instead of competing with the service for CPU. Plain JavaScript:
 * worker threads do not get tsx's loader.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

const { options, nice } = workerData;
try {
  // On Linux the nice value is per thread: this lowers this thread only.
  setPriority(nice);
} catch {
  // Not permitted here: the load runs at normal priority.
}
// Loaded after lowering the priority, and before reporting ready: `run()` in
// bench/load.ts starts the load at once, beside a measurement.
const { default: autocannon } = await import('autocannon');
parentPort.postMessage('ready');
await new Promise((resolve) => parentPort.once('message', resolve));
// Off the main thread autocannon returns its raw per-thread result (encoded
// histograms) and leaves the aggregation to the caller.
const result = autocannon.aggregateResult([await autocannon(options)], options);
// Only the plain-data fields: the result also holds objects that cannot be posted.
parentPort.postMessage({
  duration: result.duration,
  errors: result.errors,
  statusCodeStats: result.statusCodeStats,
  latency: result.latency,
});
