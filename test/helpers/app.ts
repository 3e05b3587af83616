/** Builds the real application on the file's test database; closed after each test (or shared by a read-only suite). */
import { after, afterEach, before } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase, useTestDatabase } from './database.js';

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

/**
 * One app and database for a suite of tests that only read what its `before`
 * seeded: built once, not per test. Call inside describe().
 */
export function useSharedTestApp(overrides: Partial<Config> = {}): { readonly app: FastifyInstance } {
  let database: TestDatabase | undefined;
  let app: FastifyInstance | undefined;
  before(async () => {
    database = await createTestDatabase();
    app = await buildApp({ config: testConfig(overrides), database: database.database });
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await database?.drop();
  });
  return {
    get app() {
      if (!app) throw new Error('shared test app not ready');
      return app;
    },
  };
}

/**
 * Another instance on the harness's database, as a second server would be: its own
 * pool and LISTEN connection on PostgreSQL (the same database object on PGlite).
 * The caller closes it.
 */
export async function secondInstance(h: Harness, overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const url = h.db.current.url;
  const database = url ? await openDatabase({ databaseUrl: url }) : h.db.current.database;
  const app = await buildApp({ config: testConfig(overrides), database, ownsDatabase: url !== undefined });
  await app.ready();
  return app;
}

export type Injected = Awaited<ReturnType<FastifyInstance['inject']>>;

export function json<T = Record<string, any>>(response: Injected): T {
  return response.json() as T;
}

export function bearer(token: string): InjectOptions['headers'] {
  return { authorization: `Bearer ${token}` };
}
