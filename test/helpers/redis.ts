/**
 * Redis for tests that need one: only with TEST_REDIS_URL (skipped otherwise),
 * a unique key prefix per test, and a TCP proxy in front of it that a test can
 * close to play "Redis went away" without stopping the shared server.
 */
import { randomBytes } from 'node:crypto';
import { startTcpProxy, viaProxy } from './tcp-proxy.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL?.trim() || undefined;
export const NEEDS_REDIS = TEST_REDIS_URL
  ? false
  : 'set TEST_REDIS_URL=redis://127.0.0.1:6379 to run the shared-counter tests';

export function uniquePrefix(): string {
  return `feegate-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

export interface RedisProxy {
  url: string;
  /** Closes the listener and every proxied connection: Redis is gone for the app. */
  close(): Promise<void>;
}

export async function startRedisProxy(target = TEST_REDIS_URL!): Promise<RedisProxy> {
  const { hostname, port } = new URL(target);
  const proxy = await startTcpProxy({ host: hostname, port: Number(port || 6379) });
  return { url: viaProxy(target, proxy), close: () => proxy.stop() };
}
