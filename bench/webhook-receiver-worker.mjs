/**
 * The webhook bench's receiver, in its own thread (started by
 * `startWebhookReceiver`, bench/webhooks.ts). It stands in for an
 * integration's server on another machine: on the bench's main thread its
 * receipts would take turns with the load generator measuring key
 * authentication beside the deliveries. Plain JavaScript: worker threads do not
 * get tsx's loader.
 */
import http from 'node:http';
import { parentPort } from 'node:worker_threads';

/** Commit-to-receipt latencies (ms) by event id, first receipt only, since the last 'take'. */
const latencies = new Map();
let duplicates = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const received = Date.now();
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (latencies.has(event.id)) duplicates++;
    else latencies.set(event.id, received - Date.parse(event.created));
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));

parentPort.on('message', (message) => {
  if (message === 'count') parentPort.postMessage({ count: latencies.size });
  else if (message === 'take') {
    parentPort.postMessage({ latencies: [...latencies.values()], duplicates });
    latencies.clear();
    duplicates = 0;
  } else if (message === 'close') {
    server.closeAllConnections();
    server.close(() => parentPort.close());
  }
});
