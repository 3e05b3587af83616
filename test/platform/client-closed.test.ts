/** A client that hangs up before its answer is logged and counted as 499 client_closed, never as a 503 (docs/operations.md#starting-and-stopping). */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp, loggerOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { useTestDatabase } from '../helpers/database.js';
import { seedWorld } from '../helpers/fixtures.js';
import { openSocket, portOf } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait.js';

const db = useTestDatabase();

/** Sends `text` on a new connection and hangs up as soon as it has left, before any answer. */
async function sendAndHangUp(port: number, text: string): Promise<void> {
  const socket = await openSocket(port);
  await new Promise<void>((resolve) => socket.write(text, () => resolve()));
  socket.destroy();
}

async function clientClosedCount(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const series = 'feegate_http_requests_total{route="/v1/login",method="POST",status="499"}';
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('a client that hangs up', () => {
  it('is logged as client_closed 499 and counted as 499, mid-body or while its login is hashed; never database_unavailable', async () => {
    const lines: Record<string, any>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const config = testConfig({ logLevel: 'info', metricsPort: 0 });
    const app = await buildApp({
      config,
      database: db.current.database,
      loggerInstance: pino(loggerOptions(config) as object, sink),
    });
    try {
      const world = await seedWorld(app);
      await app.listen({ host: '127.0.0.1', port: 0 });
      const port = portOf(app);
      const metricsPort = (app.metricsServer!.address() as { port: number }).port;
      const before = await clientClosedCount(metricsPort);
      const closedLines = () => lines.filter((l) => l.code === 'client_closed');

      // Half a body: the body parser's "aborted" error used to be mapped to 503 database_unavailable.
      await sendAndHangUp(
        port,
        'POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user":',
      );
      await waitFor(() => closedLines().length === 1, 'the hang-up mid-body is logged');

      // A whole login, whose client leaves while the password is hashed (argon2).
      const body = JSON.stringify(world.login);
      await sendAndHangUp(
        port,
        `POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      await waitFor(() => closedLines().length === 2, 'the hang-up during the login is logged');

      for (const line of closedLines()) {
        assert.equal(line.status, 499);
        assert.equal(line.level, 30, 'info: an expected event, not an error');
        assert.equal(typeof line.reqId, 'string');
      }
      await waitFor(async () => (await clientClosedCount(metricsPort)) === before + 2, 'both are counted as 499');
    } finally {
      // Closing flushes the once-a-second log of refusals, where a 503 would show.
      await app.close();
    }
    assert.deepEqual(
      lines.filter(
        (l) => l.code === 'database_unavailable' || l.status === 503 || l.level >= 50 || l.msg === 'request completed',
      ),
      [],
      'no 503, no error, no "request completed" for an answer nobody received',
    );
  });
});
