/**
 * The composition root: every service built by its factory with explicit
 * dependencies. Routes reach them through `app.services`; the command line
 * builds the same object without HTTP.
 */
import { type Config, keyRingOf } from './config.js';
import type { Database } from './db/database.js';
import { type Log, SILENT_LOG } from './lib/log.js';
import { createApiKeysService } from './features/api-keys/api-keys-service.js';
import { createKeyCaches, keysChangeNotice } from './features/api-keys/key-change-feed.js';
import { createLastUseRecorder } from './features/api-keys/last-use-recorder.js';
import { createAccessTokens } from './features/auth/access-tokens.js';
import { listenForAuthChanges } from './features/auth/auth-change-feed.js';
import { createAuthService } from './features/auth/auth-service.js';
import { createLoginThrottle, MAX_TRACKED_COUNTS } from './features/auth/login-throttle.js';
import { createPasswordHasher } from './features/credentials/password-hasher.js';
import { createAuditService } from './features/audit/audit-service.js';
import { createAssignmentLimit } from './features/fee-plans/assignment-limit.js';
import { createCustomerLocks } from './db/customer-locks.js';
import { createFeeRuleTimelines } from './features/fee-plans/fee-rule-timelines.js';
import { createFeeRuleCatalogueService } from './features/fee-plans/fee-rule-catalogue-service.js';
import { createFeeRulesService } from './features/fee-plans/fee-rules-service.js';
import { createPlansInForce } from './features/fee-plans/plans-in-force.js';
import { createFeeQuotesService } from './features/fee-quotes/fee-quotes-service.js';
import { createScheduledChangesService, SCHEDULED_CHANNEL } from './features/fee-plans/scheduled-changes-service.js';
import { createMerchantStatuses } from './features/merchants/merchant-statuses.js';
import { createMerchantsService } from './features/merchants/merchants-service.js';
import { createImportService } from './features/operator/import-service.js';
import { createPaymentPlansService } from './features/fee-plans/payment-plans-service.js';
import { createWebhookDelivery } from './features/webhooks/webhook-delivery.js';
import { createWebhookSender } from './features/webhooks/webhook-sender.js';
import { createWebhooksService } from './features/webhooks/webhooks-service.js';
import { createBackgroundWorker } from './lib/background-worker.js';
import { createPerMinuteLimit } from './lib/per-minute-limit.js';
import { createPermits } from './lib/permits.js';
import { connectRedis, createSharedCounters } from './lib/shared-counters.js';
import { createMailSender } from './features/mail/mail-sender.js';
import { createUsersService } from './features/users/users-service.js';
import { createDataLayer } from './data-layer.js';
import { importDocumentCheck, quoteLineCheck } from './schema-checks.js';
import { createSecretsService } from './features/secrets/secrets-service.js';
import { createSealedValues } from './lib/sealed-values.js';
import { createIdempotencyService } from './features/idempotency/idempotency-service.js';
import { createChangeRequestsService } from './features/change-requests/change-requests-service.js';
import { createHeldFeeChanges } from './features/fee-plans/held-fee-changes.js';

/** Rate-limited keys and client addresses an instance counts in memory (oldest dropped first). */
const MAX_LOCAL_RATE_COUNTERS = 100_000;
/** Merchants' fee-rule timelines held per instance, and for how long (changes are pushed; this bounds the rest). */
const MAX_FEE_RULE_TIMELINES = 10_000;
const FEE_RULE_TIMELINE_TTL_MS = 60_000;
/** Merchants' statuses held per instance for fee quotes, and for how long (changes are pushed; this bounds the rest). */
const MAX_MERCHANT_STATUSES = 10_000;
const MERCHANT_STATUS_TTL_MS = 60_000;
const TOKEN_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** How often expired Idempotency-Key answers are removed (a batch per tick, more at once while a batch was full). */
const IDEMPOTENCY_SWEEP_INTERVAL_MS = 60 * 1000;
/** How often keys about to expire are looked for (API_KEY_EXPIRING). */
const EXPIRY_SWEEP_INTERVAL_MS = 60 * 1000;
/** How often pending change requests past their instant are expired (a batch per tick, more at once while full). */
const CHANGE_REQUEST_SWEEP_INTERVAL_MS = 1000;

export function createServices(config: Config, database: Database, log: Log = SILENT_LOG) {
  const sealed = createSealedValues(keyRingOf(config), log);
  const { dal, uow } = createDataLayer(database, sealed);
  const secrets = createSecretsService({ uow, dal: dal.secrets, sealed });
  const hasher = createPasswordHasher({
    concurrency: config.loginConcurrency,
    queueLimit: config.loginQueueLimit,
    cpuPercent: config.loginHashCpuPercent,
    idlePriority: config.loginHashIdlePriority,
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
    auditRecordsWanted: (customerId) => dal.webhooks.subscribesToAuditRecords(customerId),
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
    uow,
    intervalMs: config.lastUsedFlushMs,
    onError: (err) => log.warn({ err }, 'could not record API key use; will retry'),
  });
  const customerLocks = createCustomerLocks({
    uow,
    tryLock: (scopeDal, customerIds) => scopeDal.feeRules.tryLockCustomers(customerIds),
    waitLimitMs: config.databaseStatementTimeoutMs,
  });
  const importer = createImportService({
    dal: dal.import,
    hasher,
    sessions: auth,
    customerLocks,
    checkDocument: importDocumentCheck(),
  });
  const apiKeys = createApiKeysService({
    uow,
    dal: dal.apiKeys,
    merchantsDal: dal.merchants,
    caches: keyCaches,
    lastUse,
  });
  const listingPagePermits = createPermits(config.listingConcurrentPages);
  const merchantStatuses = createMerchantStatuses({
    database,
    merchantsDal: dal.merchants,
    ttlMs: MERCHANT_STATUS_TTL_MS,
    maxEntries: MAX_MERCHANT_STATUSES,
  });
  const merchants = createMerchantsService({
    uow,
    merchantsDal: dal.merchants,
    keyCaches: { noticeFor: keysChangeNotice, changed: keyCaches.changed },
    statuses: merchantStatuses,
    customerLocks,
    listingPagePermits,
  });
  const paymentPlans = createPaymentPlansService({ paymentPlansDal: dal.paymentPlans, merchants });
  const assignmentLimit = createAssignmentLimit({
    counters: counters('assignments', MAX_LOCAL_RATE_COUNTERS),
    perMinute: config.assignmentsPerCustomerPerMinute,
  });
  const timelines = createFeeRuleTimelines({
    database,
    ttlMs: FEE_RULE_TIMELINE_TTL_MS,
    maxEntries: MAX_FEE_RULE_TIMELINES,
  });
  const scheduledChanges = createScheduledChangesService({
    uow,
    timelines,
    scheduledChangesDal: dal.scheduledChanges,
    customerLocks,
    assignmentLimit,
  });
  const plansInForce = createPlansInForce({
    feeRulesDal: dal.feeRules,
    paymentPlansDal: dal.paymentPlans,
    scheduledChangesDal: dal.scheduledChanges,
    timelines,
  });
  const feeRules = createFeeRulesService({
    uow,
    plansInForce,
    merchants,
    assignmentLimit,
    customerLocks,
    scheduled: scheduledChanges,
    timelines,
  });
  const feeQuotes = createFeeQuotesService({
    plansInForce,
    merchantStatuses,
    checkLine: quoteLineCheck(),
  });
  const feeRuleCatalogue = createFeeRuleCatalogueService({ paymentPlansDal: dal.paymentPlans, customerLocks });
  const changeRequests = createChangeRequestsService({
    uow,
    changeRequestsDal: dal.changeRequests,
    heldChanges: createHeldFeeChanges({ feeRules, feeRuleCatalogue, scheduledChanges }),
  });
  // A held scheduling expires at its instant: looked for every second, so it is EXPIRED within a second of it.
  const changeRequestSweep = createBackgroundWorker({
    name: 'change-request-expiry',
    intervalMs: CHANGE_REQUEST_SWEEP_INTERVAL_MS,
    log,
    tick: () => changeRequests.expireDue(),
  });
  // Scheduled changes fall due by the clock: every instance looks each interval, and a new one wakes them all.
  const scheduledWorker = createBackgroundWorker({
    name: 'scheduled-fee-rule-changes',
    intervalMs: config.scheduledChangesPollMs,
    tick: () => scheduledChanges.applyDue(),
    log,
  });
  let unlistenScheduled: (() => Promise<void>) | undefined;
  const audit = createAuditService({ auditDal: dal.audit });
  // A claim outlives the longest request: a wait for the customer lock, then its longest statement.
  const idempotency = createIdempotencyService({
    uow,
    idempotencyDal: dal.idempotency,
    leaseMs: 2 * config.databaseStatementTimeoutMs + 10_000,
  });
  const idempotencySweep = createBackgroundWorker({
    name: 'idempotency-expiry',
    intervalMs: IDEMPOTENCY_SWEEP_INTERVAL_MS,
    log,
    tick: () => idempotency.removeExpired(),
  });
  const urlPolicy = { allowHttp: config.webhookAllowHttp, allowedHosts: config.webhookAllowedHosts };
  const webhooks = createWebhooksService({
    uow,
    dal: dal.webhooks,
    policy: urlPolicy,
    testSends: createPerMinuteLimit({
      counters: counters('webhook-tests', MAX_LOCAL_RATE_COUNTERS),
      perMinute: config.webhookTestSendsPerCustomerPerMinute,
      what: 'test sends',
    }),
  });
  const delivery = config.webhookWorker
    ? createWebhookDelivery({
        uow,
        sender: createWebhookSender({ policy: urlPolicy, timeoutMs: config.webhookTimeoutSeconds * 1000 }),
        listen: (channel, onMessage) => database.listen(channel, { onMessage }),
        retrySchedule: config.webhookRetrySchedule,
        timeoutMs: config.webhookTimeoutSeconds * 1000,
        concurrency: config.webhookConcurrency,
        log,
      })
    : undefined;
  // The expiry warnings are events like any other: swept where webhooks are delivered.
  const expirySweep = config.webhookWorker
    ? createBackgroundWorker({
        name: 'api-key-expiry',
        intervalMs: EXPIRY_SWEEP_INTERVAL_MS,
        log,
        tick: async () => (await apiKeys.warnExpiring()) > 0,
      })
    : undefined;
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
    /** Turns of the merchant listing's pages: how many wait is a gauge. */
    listingPagePermits,
    /** Secrets at rest: prepared before anything reads one (start does it). */
    secrets,
    hasher,
    auth,
    importer,
    merchants,
    paymentPlans,
    feeRules,
    feeQuotes,
    feeRuleCatalogue,
    scheduledChanges,
    changeRequests,
    apiKeys,
    /** Counters of the rate limits (src/plugins/rate-limit.ts). */
    rateLimits,
    audit,
    webhooks,
    /** Idempotency-Key claims and their answers (src/plugins/idempotency.ts). */
    idempotency,
    /** Deliveries waiting, and the oldest one's age (metrics). */
    webhookQueue: () => dal.webhooks.queueStats(),
    /** Starts background work (pushed revocations, batched writes). */
    async start(): Promise<void> {
      await secrets.prepare();
      await auth.start();
      await keyCaches.start();
      await timelines.start();
      await merchantStatuses.start();
      lastUse.start();
      await delivery?.start();
      expirySweep?.start();
      mailSender?.start();
      pruneTimer = setInterval(() => {
        auth.pruneExpiredTokens().catch((err) => log.warn({ err }, 'could not prune expired tokens'));
      }, TOKEN_PRUNE_INTERVAL_MS);
      pruneTimer.unref();
      unlistenScheduled = await database.listen(SCHEDULED_CHANNEL, { onMessage: () => scheduledWorker.wake() });
      scheduledWorker.start();
      idempotencySweep.start();
      changeRequestSweep.start();
    },
    /** Stops background work and flushes what is pending. */
    async stop(): Promise<void> {
      clearInterval(pruneTimer);
      await idempotencySweep.stop();
      await changeRequestSweep.stop();
      await expirySweep?.stop();
      await delivery?.stop();
      await scheduledWorker.stop();
      // A database already gone cannot be told to stop listening; nothing is lost.
      await unlistenScheduled?.().catch(() => {});
      await lastUse.stop();
      await users.stop();
      await mailSender?.stop();
      await keyCaches.stop();
      await timelines.stop().catch(() => {});
      await merchantStatuses.stop().catch(() => {});
      await auth.stop();
      await hasher.close();
      redis?.disconnect();
    },
  };
}

export type Services = ReturnType<typeof createServices>;
