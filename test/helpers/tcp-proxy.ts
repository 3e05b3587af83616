/**
 * A TCP proxy owned by a test, in front of a real server (PostgreSQL, Redis):
 * the test can cut every connection through it, or stop it altogether, to play
 * a network failure without touching the shared server.
 */
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Destroys every open connection; new ones are still accepted (a failover, a dropped link). */
  cut(): void;
  /** Stops listening and destroys every connection (the server is gone). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, port = 0): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (on: number) => new Promise<void>((resolve) => server.listen(on, '127.0.0.1', resolve));
  await listen(port);
  const bound = (server.address() as net.AddressInfo).port;
  const cut = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    port: bound,
    cut,
    async stop() {
      cut();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    },
    restart: () => listen(bound),
  };
}

/** The same URL, through the proxy. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}
