/**
 * Line 2d's OTLP/HTTP JSON receiver, in its own thread (started by
 * `startBenchOtlpReceiver`, bench/tracing.ts). It stands in for a collector on
 * another machine: on the bench's main thread, parsing the exported spans took
 * turns with the load generator, and the traced side's throughput measured the
 * bench, not the service. Plain JavaScript: worker threads do not get tsx's loader.
 */
import http from 'node:http';
import { parentPort } from 'node:worker_threads';

let spans = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      for (const resourceSpans of JSON.parse(Buffer.concat(chunks).toString('utf8')).resourceSpans ?? [])
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) spans += (scopeSpans.spans ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } catch {
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));

parentPort.on('message', (message) => {
  if (message === 'count') parentPort.postMessage({ count: spans });
  else if (message === 'close') {
    server.closeAllConnections();
    server.close(() => parentPort.close());
  }
});
