import { once } from 'node:events';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now, for a server the test starts as a process. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}
