/**
 * The composition root: every service built by its factory with explicit
 * dependencies. Routes reach them through `app.services`; the command line
 * builds the same object without HTTP.
 */
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { createApiKeysService } from './features/api-keys/api-keys-service.js';
import { createKeyCaches } from './features/api-keys/key-change-feed.js';
import { createLastUseRecorder } from './features/api-keys/last-use-recorder.js';
import { createAccessTokens } from './features/auth/access-tokens.js';
import { listenForAuthChanges } from './features/auth/auth-change-feed.js';
import { createAuthService } from './features/auth/auth-service.js';
import { createLoginThrottle, MAX_TRACKED_COUNTS } from './features/auth/login-throttle.js';
import { createPasswordHasher } from './features/auth/password-hasher.js';
import { createAuditService } from './features/audit/audit-service.js';
import { createAssignmentLimit } from './features/fee-rules/assignment-limit.js';
import { createCustomerLocks } from './features/fee-rules/customer-locks.js';
import { createFeeRulesService } from './features/fee-rules/fee-rules-service.js';
import { createMerchantsService } from './features/merchants/merchants-service.js';
import { createImportService, type DocumentCheck } from './features/operator/import-service.js';
import { createPaymentPlansService } from './features/payment-plans/payment-plans-service.js';
import { connectRedis, createSharedCounters } from './lib/shared-counters.js';
import { createMailSender } from './features/mail/mail-sender.js';
import { createUsersService } from './features/users/users-service.js';
import { createDataLayer } from './db/data-layer.js';
import { ImportDocument } from './features/operator/import-schema.js';
import { describeRefusals } from './plugins/problem-details.js';
import { createStrictAjv } from './plugins/validation.js';

/** Where background work reports trouble it cannot return to a caller. */
export interface ServiceLog {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}
const silent: ServiceLog = { warn() {} };

let importCheck: ReturnType<typeof compileImportCheck> | undefined;
/** The import document checked by the API's body validator, with its words (compiled once per process). */
function compileImportCheck() {
  const check = createStrictAjv().compile<ImportDocument>(ImportDocument);
  const checkDocument: DocumentCheck = (raw) => {
    if (check(raw)) return { document: raw };
    const [first] = describeRefusals(check.errors ?? []);
    return { path: first?.path ?? '', message: first?.message ?? 'is not a valid import document' };
  };
  return checkDocument;
}
/** Rate-limited keys and client addresses an instance counts in memory (oldest dropped first). */
const MAX_LOCAL_RATE_COUNTERS = 100_000;
const TOKEN_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export function createServices(config: Config, database: Database, log: ServiceLog = silent) {
  const { dal, uow } = createDataLayer(database);
  const hasher = createPasswordHasher({
    concurrency: config.loginConcurrency,
    queueLimit: config.loginQueueLimit,
    cpuPercent: config.loginHashCpuPercent,
  });
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  const counterLog = {
    warn: (obj: object, msg: string) => log.warn(obj, msg),
    info: (obj: object, msg: string) => (log.info ?? log.warn).call(log, obj, msg),
  };
  const counters = (name: string, localEntries: number) =>
    createSharedCounters({ redis, prefix: `${config.redisKeyPrefix}${name}:`, name, log: counterLog, localEntries });
  const rateLimits = counters('rate', MAX_LOCAL_RATE_COUNTERS);
  const auth = createAuthService({
    uow,
    authDal: dal.auth,
    hasher,
    throttle: createLoginThrottle({
      perAddress: config.loginMaxFailures,
      perUser: config.loginMaxFailuresPerUser,
      windowSeconds: config.loginFailureWindowSeconds,
      counters: counters('auth', MAX_TRACKED_COUNTS),
    }),
    accessTokens: createAccessTokens({
      dal: dal.signingKeys,
      uow,
      issuer: config.issuer,
      ttlSeconds: config.accessTokenTtlSeconds,
    }),
    listen: (handlers) => listenForAuthChanges(database, handlers),
    onBackgroundError: (err, what) => log.warn({ err }, what),
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    sessionMaxAgeSeconds: config.sessionMaxAgeSeconds,
  });
  let pruneTimer: NodeJS.Timeout | undefined;
  const keyCaches = createKeyCaches({
    database,
    keyTtlMs: config.apiKeyCacheTtlMs,
    listingTtlMs: config.apiKeyListingCacheTtlMs,
  });
  const lastUse = createLastUseRecorder({
    dal: dal.apiKeys,
    intervalMs: config.lastUsedFlushMs,
    onError: (err) => log.warn({ err }, 'could not record API key use; will retry'),
  });
  const customerLocks = createCustomerLocks({ uow, waitLimitMs: config.databaseStatementTimeoutMs });
  const importer = createImportService({
    dal: dal.import,
    hasher,
    customerLocks,
    checkDocument: (importCheck ??= compileImportCheck()),
  });
  const apiKeys = createApiKeysService({
    uow,
    dal: dal.apiKeys,
    merchantsDal: dal.merchants,
    caches: keyCaches,
    lastUse,
  });
  const merchants = createMerchantsService({ merchantsDal: dal.merchants });
  const paymentPlans = createPaymentPlansService({ paymentPlansDal: dal.paymentPlans, merchants });
  const assignmentLimit = createAssignmentLimit({
    counters: counters('assignments', MAX_LOCAL_RATE_COUNTERS),
    perMinute: config.assignmentsPerCustomerPerMinute,
  });
  const feeRules = createFeeRulesService({ uow, feeRulesDal: dal.feeRules, merchants, assignmentLimit, customerLocks });
  const audit = createAuditService({ auditDal: dal.audit });
  const mailSender = config.smtpUrl
    ? createMailSender({ smtpUrl: config.smtpUrl, from: config.smtpFrom, uow, log })
    : undefined;
  const users = createUsersService({
    uow,
    usersDal: dal.users,
    auth,
    hasher,
    keyCaches,
    mailEnabled: mailSender !== undefined,
    mailQueued: () => mailSender?.wake(),
    totpIssuer: config.issuer,
    onBackgroundError: (err, what) => log.warn({ err }, what),
  });
  return {
    users,
    hasher,
    auth,
    importer,
    merchants,
    paymentPlans,
    feeRules,
    apiKeys,
    /** Counters of the rate limits (src/plugins/rate-limit.ts). */
    rateLimits,
    audit,
    /** Starts background work (pushed revocations, batched writes). */
    async start(): Promise<void> {
      await auth.start();
      await keyCaches.start();
      lastUse.start();
      mailSender?.start();
      pruneTimer = setInterval(() => {
        auth.pruneExpiredTokens().catch((err) => log.warn({ err }, 'could not prune expired tokens'));
      }, TOKEN_PRUNE_INTERVAL_MS);
      pruneTimer.unref();
    },
    /** Stops background work and flushes what is pending. */
    async stop(): Promise<void> {
      clearInterval(pruneTimer);
      await lastUse.stop();
      await users.stop();
      await mailSender?.stop();
      await keyCaches.stop();
      await auth.stop();
      await hasher.close();
      redis?.disconnect();
    },
  };
}

export type Services = ReturnType<typeof createServices>;
