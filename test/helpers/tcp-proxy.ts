/**
 * A TCP proxy owned by a test, in front of a real server (PostgreSQL, Redis):
 * the test can cut every connection through it, stop it altogether, swallow
 * bytes without closing anything (a NAT or firewall that forgot a connection),
 * or hold them for a while (a hang), to play a network failure without touching
 * the shared server.
 */
import net from 'node:net';

/** Which connections a black hole swallows; PostgreSQL's only. */
export interface ConnectionMatch {
  /** The `application_name` the client sent in its StartupMessage. */
  applicationName?: string;
}

export interface ProxiedConnection {
  /** What the client sent first (PostgreSQL: its StartupMessage), as latin1 text. */
  readonly startup: string;
  /** Its bytes are dropped, both ways, for good. */
  readonly swallowed: boolean;
  /** The client has not closed its side. */
  readonly clientOpen: boolean;
}

export interface TcpProxy {
  readonly port: number;
  /** Destroys every open connection; new ones are still accepted (a failover, a dropped link). */
  cut(): void;
  /** Stops listening and destroys every connection (the server is gone). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  /**
   * From now on every byte of the matching connections is dropped, both ways,
   * and neither side learns of the other closing: nothing is reset, as when a
   * NAT or firewall forgets an idle connection. Until heal(), new matching
   * connections are swallowed too. Swallowed connections stay dead after heal().
   */
  blackHole(match?: ConnectionMatch): void;
  /** New connections pass again. */
  heal(): void;
  /** Holds every byte, of open and new connections, until resume() delivers them: a hang without loss. */
  pause(): void;
  resume(): void;
  /** The connections open now. */
  connections(): ProxiedConnection[];
}

interface Link {
  client: net.Socket;
  upstream: net.Socket;
  startup: Buffer | undefined;
  swallowed: boolean;
  /** Bytes held by pause(), in order, each with the socket to write it to. */
  held: Array<{ to: net.Socket; chunk: Buffer }>;
}

function matches(link: Link, match: ConnectionMatch): boolean {
  if (match.applicationName === undefined) return true;
  return link.startup?.includes(`application_name\0${match.applicationName}\0`, 0, 'latin1') ?? false;
}

export async function startTcpProxy(target: { host: string; port: number }, port = 0): Promise<TcpProxy> {
  const links = new Set<Link>();
  let hole: ConnectionMatch | undefined;
  let paused = false;

  const forward = (link: Link, to: net.Socket, chunk: Buffer) => {
    if (link.swallowed) return;
    if (paused) link.held.push({ to, chunk });
    else to.write(chunk);
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const link: Link = { client, upstream, startup: undefined, swallowed: false, held: [] };
    links.add(link);
    client.on('data', (chunk) => {
      if (!link.startup) {
        link.startup = chunk;
        if (hole && matches(link, hole)) link.swallowed = true;
      }
      forward(link, upstream, chunk);
    });
    upstream.on('data', (chunk) => forward(link, client, chunk));
    for (const [side, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      side.on('error', () => {});
      side.on('close', () => {
        // A swallowed connection's close is lost in the hole like its bytes.
        if (!link.swallowed) other.destroy();
        if (client.destroyed && upstream.destroyed) links.delete(link);
      });
    }
  });
  const listen = (on: number) => new Promise<void>((resolve) => server.listen(on, '127.0.0.1', resolve));
  await listen(port);
  const bound = (server.address() as net.AddressInfo).port;
  const cut = () => {
    for (const link of links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    links.clear();
  };
  return {
    port: bound,
    cut,
    async stop() {
      cut();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    },
    restart: () => listen(bound),
    blackHole(match = {}) {
      hole = match;
      for (const link of links) if (link.startup && matches(link, match)) link.swallowed = true;
    },
    heal() {
      hole = undefined;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const link of links) for (const { to, chunk } of link.held.splice(0)) if (!link.swallowed) to.write(chunk);
    },
    connections() {
      return [...links].map((link) => ({
        startup: link.startup?.toString('latin1') ?? '',
        swallowed: link.swallowed,
        clientOpen: !link.client.destroyed,
      }));
    },
  };
}

/** The same URL, through the proxy. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}
