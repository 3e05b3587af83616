/** HTTP/1.1 over a bare socket: for what fetch cannot send (half a request, 20 KB of headers, garbage). */
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the last write until the server closed the connection. */
  closedAfterMs: number;
}

export function portOf(app: FastifyInstance): number {
  return (app.server.address() as { port: number }).port;
}

export async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/** Everything the server sends until it closes the connection, parsed (one answer). */
export function readUntilClosed(socket: Socket, timeoutMs = 10_000): Promise<RawAnswer> {
  const started = performance.now();
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `the server did not close the connection within ${timeoutMs} ms; got ${JSON.stringify(text.slice(0, 300))}`,
        ),
      );
    }, timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        if (at > 0) headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        body: rest.join('\r\n\r\n'),
        closedAfterMs: performance.now() - started,
      });
    });
  });
}

/** Sends `text` on a new connection and reads the answer until the server closes. */
export async function rawExchange(port: number, text: string, timeoutMs?: number): Promise<RawAnswer> {
  const socket = await openSocket(port);
  const answer = readUntilClosed(socket, timeoutMs);
  socket.write(text);
  return answer;
}
