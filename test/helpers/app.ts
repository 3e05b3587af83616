/** Builds the real application on the file's test database; closed after each test. */
import { afterEach } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { useTestDatabase } from './database.js';

export interface Harness {
  readonly db: ReturnType<typeof useTestDatabase>;
  /** The app of the current test, built on first use with optional config overrides. */
  app(overrides?: Partial<Config>): Promise<FastifyInstance>;
}

export function useTestApp(): Harness {
  const db = useTestDatabase();
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  return {
    db,
    async app(overrides = {}) {
      if (!app) {
        app = await buildApp({ config: testConfig(overrides), database: db.current.database });
        await app.ready();
      }
      return app;
    },
  };
}

export type Injected = Awaited<ReturnType<FastifyInstance['inject']>>;

export function json<T = Record<string, any>>(response: Injected): T {
  return response.json() as T;
}

export function bearer(token: string): InjectOptions['headers'] {
  return { authorization: `Bearer ${token}` };
}
