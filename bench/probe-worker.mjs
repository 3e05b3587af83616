/**
 * A fixed-rate latency probe, run in its own worker thread by `runProbe`
 * (bench/load.ts). Plain JavaScript: worker threads do not get tsx's loader. It has its own event loop, so the storm's load generator
 * (autocannon, on the bench's main thread, handling thousands of answers a
 * second) cannot delay the probe's timers or its reading of answers; and it
 * times each request with the monotonic clock in microseconds, where
 * autocannon's histogram rounds to whole milliseconds.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/** @type {import('./load.ts').ProbeInput} */
const input = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: input.connections });
/** @type {number[]} */
const latenciesMs = [];
/** @type {number[]} */
const sentAtMs = [];
/** @type {Record<string, number>} */
const statuses = {};
let errors = 0;
let inFlight = 0;

/**
 * Open loop: a request is due every 1/rate s whatever the previous ones do. Its
 * latency counts from when it is handed to the agent (it waits there if all
 * connections are busy), not from when it was due: a late timer in this thread
 * is the machine's noise, not the service's.
 */
function send() {
  inFlight++;
  const sentAt = performance.now();
  const request = http.get(input.url, { agent }, (response) => {
    response.resume();
    response.once('end', () => {
      latenciesMs.push(performance.now() - sentAt);
      sentAtMs.push(performance.timeOrigin + sentAt);
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      done();
    });
  });
  request.setTimeout(30_000, () => request.destroy(new Error('probe timeout')));
  request.once('error', () => {
    errors++;
    done();
  });
}

/** @type {() => void} */
let finish = () => {};
const finished = new Promise((resolve) => (finish = () => resolve(undefined)));
let stopped = false;
function done() {
  inFlight--;
  if (stopped && inFlight === 0) finish();
}

const intervalMs = 1000 / input.rate;
const started = performance.now();
let endAt = started + input.durationSeconds * 1000;
// "stop" ends a probe started for as long as something else lasts (bench/load.ts, startProbe).
parentPort?.on('message', (message) => {
  if (message === 'stop') endAt = Math.min(endAt, performance.now());
});
let next = started;
function tick() {
  const now = performance.now();
  // Send every request that has come due (more than one if this thread was late).
  while (next <= now && next < endAt) {
    send();
    next += intervalMs;
  }
  if (next < endAt) setTimeout(tick, Math.max(0, next - performance.now()));
  else {
    stopped = true;
    if (inFlight === 0) finish();
  }
}
tick();
await finished;
agent.destroy();
/** @type {import('./load.ts').ProbeOutput} */
const output = { latenciesMs, sentAtMs, statuses, errors, seconds: (performance.now() - started) / 1000 };
parentPort?.postMessage(output);
parentPort?.removeAllListeners('message');
