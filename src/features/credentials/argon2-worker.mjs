// Runs argon2 for the main thread at the lowest CPU priority: under a login
// storm, hashing takes whatever CPU is left and never the event loop's share.
// Plain JavaScript so that it loads in a worker without a TypeScript loader.
import { execFile } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { hashSync, verifySync } from '@node-rs/argon2';

/** Lowers this worker only: on Linux the nice value is per thread. */
function niceLowest() {
  try {
    setPriority(19);
  } catch {
    // Not permitted here: hashing still runs off the event loop.
  }
}

/**
 * On Linux, also SCHED_IDLE: a waking thread of any other policy preempts it at
 * once, where nice 19 still runs out its slice first, and cheap requests wait
 * behind it (docs/performance.md). Node has no call for
 * sched_setscheduler and no maintained package offers one, so util-linux's
 * `chrt` sets it on this thread's id; any thread may lower itself to SCHED_IDLE
 * without privileges. Without chrt the thread keeps nice 19.
 */
function scheduleIdle() {
  let threadId;
  try {
    threadId = readlinkSync('/proc/thread-self').split('/').pop();
  } catch {
    return; // not Linux
  }
  execFile('chrt', ['--idle', '--pid', '0', threadId], { timeout: 5000 }, () => {
    // Failed (no chrt, or refused): nice 19 stays in force.
  });
}
// LOGIN_HASH_IDLE_PRIORITY=false keeps normal priority, where the cores are never idle for long.
if (workerData?.idlePriority !== false) {
  niceLowest();
  scheduleIdle();
}

/**
 * After each job the thread rests (blocks) for the part of the time it took that
 * exceeds its share of a core (LOGIN_HASH_CPU_PERCENT): the answer is already
 * posted, so only the next queued hash waits, and only under sustained load.
 */
const restPerBusyMs = 100 / (workerData?.cpuPercent ?? 100) - 1;
// Each rest is reported only to a pool that listens (tests): otherwise that would wake the event loop once more per hash.
const reportRests = workerData?.reportRests === true;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

parentPort.on('message', ({ id, op, password, phc, options }) => {
  const started = performance.now();
  try {
    const result = op === 'hash' ? hashSync(password, options) : verifySync(phc, password);
    parentPort.postMessage({ id, result });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
  if (restPerBusyMs > 0) {
    const resting = performance.now();
    const busyMs = resting - started;
    Atomics.wait(sleeper, 0, 0, busyMs * restPerBusyMs);
    if (reportRests) parentPort.postMessage({ rest: { busyMs, restedMs: performance.now() - resting } });
  }
});
