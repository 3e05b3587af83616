/**
 * For the files that play network failures on PostgreSQL: the file's own test
 * database, a TCP proxy in front of its server, and every uncaught exception or
 * unhandled rejection recorded, so that a test can assert the process would
 * have stayed up.
 */
import { after, before } from 'node:test';
import { createTestDatabase, type TestDatabase } from './database.js';
import { startTcpProxy, type TcpProxy, viaProxy } from './tcp-proxy.js';

export interface ProxiedDatabase {
  readonly test: TestDatabase;
  readonly proxy: TcpProxy;
  /** The database's URL through the proxy. */
  readonly url: string;
  /** What would have ended the process. */
  readonly crashes: unknown[];
}

export function useProxiedDatabase(): ProxiedDatabase {
  let test: TestDatabase | undefined;
  let proxy: TcpProxy | undefined;
  const crashes: unknown[] = [];
  const record = (err: unknown) => crashes.push(err);

  before(async () => {
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
    test = await createTestDatabase();
    const target = new URL(test.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });

  after(async () => {
    await proxy?.stop();
    await test?.drop();
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  });

  return {
    get test() {
      if (!test) throw new Error('test database not ready');
      return test;
    },
    get proxy() {
      if (!proxy) throw new Error('proxy not ready');
      return proxy;
    },
    get url() {
      return viaProxy(this.test.url!, this.proxy);
    },
    crashes,
  };
}
