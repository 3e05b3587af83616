/**
 * Configuration comes from the environment only, and is read and validated once.
 * Every variable is one row of SETTINGS: its name, the values it takes, its
 * default (or how the default is derived) and what it means. `feegate help
 * config` prints the rows, and test/operator/config.test.ts holds the README's
 * table to them. A bad value stops the process with a message naming the
 * variable; rules between variables are checked after the rows (checkTogether).
 */
import { ConfigError } from './errors.js';
import {
  type Env,
  derived,
  setting,
  optional,
  integer,
  FLAG,
  oneOf,
  text,
  DIRECTORY,
  POSTGRES_URL,
  SMTP_URL,
  REDIS_URL,
  PROXIES,
  DEMO,
  HOST_LIST,
  DURATIONS,
} from './config-kinds.js';
import { KEY_RING, KEY_RING_FILE, TEST_SECRET_KEYS } from './config-key-ring.js';

import {
  DATABASE_LOCK_TIMEOUT_MS,
  DATABASE_STATEMENT_TIMEOUT_MS,
  defaultListingConcurrentPages,
  defaultLoginConcurrency,
  LOGIN_HASH_CPU_PERCENT,
  LOGIN_QUEUE_PER_HASHER,
} from './config-defaults.js';

export { keyRingOf, NO_KEY_RING, TEST_SECRET_KEYS } from './config-key-ring.js';

/**
 * Every variable, in the README's order. A plain typed table rather than a
 * TypeBox schema: the variables are text parsed in ways JSON Schema does not
 * state (TRUST_PROXY, URLs), some defaults are computed (from the cores, from
 * another variable) and the messages are written for operators, so TypeBox
 * would only carry annotations this file interprets all the same; a row also
 * types its field of Config, and reading it costs nothing at start-up.
 */
export const SETTINGS = {
  host: setting('HOST', text('an address'), '127.0.0.1', 'address to listen on'),
  port: setting('PORT', integer(0, 65535), '3000', 'port to listen on'),
  databaseUrl: optional('DATABASE_URL', POSTGRES_URL, 'PostgreSQL server; unset: the embedded PGlite database'),
  dataDir: setting(
    'FEEGATE_DATA_DIR',
    DIRECTORY,
    './data',
    "the embedded database's directory, opened by one process at a time",
  ),
  secretKeys: optional(
    'FEEGATE_SECRET_KEYS',
    KEY_RING,
    'the key ring that encrypts secrets at rest: the first key encrypts, every key decrypts; unset: FEEGATE_SECRET_KEYS_FILE, or on the embedded database <FEEGATE_DATA_DIR>/secret-keys, made at the first start',
  ),
  secretKeysFile: optional(
    'FEEGATE_SECRET_KEYS_FILE',
    KEY_RING_FILE,
    'a file holding the key ring instead (not with FEEGATE_SECRET_KEYS)',
  ),
  loadDemoData: derived<'always' | 'on-loopback' | 'never'>(
    'FEEGATE_DEMO',
    DEMO,
    'only on loopback',
    () => 'on-loopback',
    'load the demo data into an empty embedded database at start',
  ),
  databasePoolSize: setting('DATABASE_POOL_SIZE', integer(1, 200), '10', 'PostgreSQL connections'),
  listingConcurrentPages: derived(
    'LISTING_CONCURRENT_PAGES',
    integer(1, 200),
    'cores × 2, at most DATABASE_POOL_SIZE ÷ 2',
    (vars): number => defaultListingConcurrentPages(SETTINGS.databasePoolSize.read(vars)),
    'merchant listing pages read at once; the others wait their turn',
  ),
  databaseStatementTimeoutMs: setting(
    'DATABASE_STATEMENT_TIMEOUT_MS',
    integer(1000, 3_600_000),
    String(DATABASE_STATEMENT_TIMEOUT_MS),
    'PostgreSQL cancels a statement running longer (statement_timeout)',
  ),
  databaseLockTimeoutMs: setting(
    'DATABASE_LOCK_TIMEOUT_MS',
    integer(100, 3_600_000),
    String(DATABASE_LOCK_TIMEOUT_MS),
    'a statement waits at most this long for a lock (lock_timeout); not above the statement timeout',
  ),
  accessTokenTtlSeconds: setting(
    'ACCESS_TOKEN_TTL_SECONDS',
    integer(1, 86_400),
    '3600',
    'lifetime of access tokens (expires_in)',
  ),
  refreshTokenTtlSeconds: setting(
    'REFRESH_TOKEN_TTL_SECONDS',
    integer(1, 31_536_000),
    '2592000',
    'lifetime of refresh tokens (refresh_expires_in)',
  ),
  sessionMaxAgeSeconds: setting(
    'SESSION_MAX_AGE_SECONDS',
    integer(60, 31_536_000),
    '2592000',
    "a login's refresh tokens live at most this long from the login",
  ),
  loginConcurrency: derived(
    'LOGIN_CONCURRENCY',
    integer(1, 64),
    'cores − 1 (1 to 4)',
    () => defaultLoginConcurrency(),
    'password hashes computed at once, in low-priority threads',
  ),
  loginQueueLimit: derived(
    'LOGIN_QUEUE_LIMIT',
    integer(0, 10_000),
    `${LOGIN_QUEUE_PER_HASHER} × LOGIN_CONCURRENCY`,
    // Annotated: TypeScript cannot infer a type that reads the table being built.
    (vars): number => LOGIN_QUEUE_PER_HASHER * SETTINGS.loginConcurrency.read(vars),
    'logins waiting for a hashing thread; beyond it 503 server_busy',
  ),
  loginHashCpuPercent: setting(
    'LOGIN_HASH_CPU_PERCENT',
    integer(10, 100),
    String(LOGIN_HASH_CPU_PERCENT),
    'share of a core each hashing thread uses under sustained load',
  ),
  loginHashIdlePriority: setting(
    'LOGIN_HASH_IDLE_PRIORITY',
    FLAG,
    'true',
    'hashing threads run at the lowest CPU priority (SCHED_IDLE, else nice 19)',
  ),
  loginMaxFailures: setting(
    'LOGIN_MAX_FAILURES',
    integer(0, 1000),
    '10',
    'failed logins per user name and client address within the window before 429 (0 disables)',
  ),
  loginMaxFailuresPerUser: setting(
    'LOGIN_MAX_FAILURES_PER_USER',
    integer(0, 100_000),
    '100',
    'failed logins per user name from all addresses within the window before 429 (0 disables)',
  ),
  loginFailureWindowSeconds: setting(
    'LOGIN_FAILURE_WINDOW_SECONDS',
    integer(1, 86_400),
    '900',
    'the window of both failed-login limits',
  ),
  apiKeyCacheTtlMs: setting(
    'API_KEY_CACHE_TTL_MS',
    integer(0, 3_600_000),
    '30000',
    'how long a verified API key is trusted from memory (revocation is pushed)',
  ),
  apiKeyListingCacheTtlMs: setting(
    'API_KEY_LISTING_CACHE_TTL_MS',
    integer(0, 3000),
    '1000',
    'how long a listing page is served from memory (key changes are pushed)',
  ),
  lastUsedFlushMs: setting(
    'LAST_USED_FLUSH_MS',
    integer(10, 2000),
    '1000',
    'how often last_used_at updates are written, in one batch',
  ),
  scheduledChangesPollMs: setting(
    'SCHEDULED_CHANGES_POLL_MS',
    integer(100, 4000),
    '1000',
    'how often each instance looks for scheduled fee-rule changes that fell due (they apply within 5 s)',
  ),
  bodyLimitBytes: setting('BODY_LIMIT_BYTES', integer(1024, 104_857_600), '1048576', 'larger request bodies get 413'),
  requestTimeoutSeconds: setting(
    'REQUEST_TIMEOUT_SECONDS',
    integer(1, 3600),
    '30',
    'a request not fully arrived in this time gets 408',
  ),
  logLevel: setting(
    'LOG_LEVEL',
    oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    'info',
    'pino log level',
  ),
  trustProxy: setting('TRUST_PROXY', PROXIES, 'false', 'the proxies in front whose X-Forwarded-For is believed'),
  issuer: setting(
    'FEEGATE_ISSUER',
    text('text'),
    'feegate',
    'iss of the access tokens (JWT) this service signs and accepts',
  ),
  redisUrl: optional(
    'REDIS_URL',
    REDIS_URL,
    'Redis for counters shared by every instance; unset: each instance counts alone',
  ),
  redisKeyPrefix: setting(
    'REDIS_KEY_PREFIX',
    text('text'),
    'feegate:',
    'prefix of every Redis key, so deployments can share one Redis',
  ),
  rateLimitAnonymousPerMinute: setting(
    'RATE_LIMIT_ANONYMOUS_PER_MINUTE',
    integer(0, 1_000_000),
    '60',
    'login and refresh requests per client address per minute (0 disables)',
  ),
  assignmentsPerCustomerPerMinute: setting(
    'ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE',
    integer(0, 100_000),
    '30',
    'assignment requests per customer per minute (0 disables)',
  ),
  smtpUrl: optional(
    'SMTP_URL',
    SMTP_URL,
    'mail server for temporary passwords and reset codes (smtp:// or smtps://, credentials in the URL); unset: no mail',
  ),
  smtpFrom: setting(
    'SMTP_FROM',
    text('an e-mail address'),
    'feegate <no-reply@feegate.invalid>',
    'sender of those mails',
  ),
  metricsPort: optional(
    'METRICS_PORT',
    integer(1, 65535),
    'serve Prometheus metrics at /metrics on this port, never PORT; unset: no metrics',
  ),
  metricsHost: setting('METRICS_HOST', text('an address'), '127.0.0.1', 'address of the metrics listener'),
  webhookWorker: setting(
    'WEBHOOK_WORKER',
    FLAG,
    'true',
    'this instance delivers webhooks (any number of instances may)',
  ),
  webhookAllowHttp: setting(
    'WEBHOOK_ALLOW_HTTP',
    FLAG,
    'false',
    'webhook URLs may be http:// (otherwise https:// only)',
  ),
  webhookAllowedHosts: derived(
    'WEBHOOK_ALLOWED_HOSTS',
    HOST_LIST,
    '(none)',
    () => [],
    'hosts (or host:port) webhooks may reach although private or loopback',
  ),
  webhookTimeoutSeconds: setting(
    'WEBHOOK_TIMEOUT_SECONDS',
    integer(1, 30),
    '10',
    'a delivery attempt not answered within this time fails',
  ),
  webhookRetrySchedule: setting(
    'WEBHOOK_RETRY_SCHEDULE',
    DURATIONS,
    '5s,5m,30m,2h,5h,10h,10h',
    'waits before each retry of a failed delivery (±20% jitter); FAILED after the last',
  ),
  webhookConcurrency: setting(
    'WEBHOOK_CONCURRENCY',
    integer(1, 1000),
    '64',
    'delivery attempts in flight at once per instance; one customer holds at most half of them',
  ),
  webhookTestSendsPerCustomerPerMinute: setting(
    'WEBHOOK_TEST_SENDS_PER_CUSTOMER_PER_MINUTE',
    integer(0, 100_000),
    '10',
    'test sends (POST /v1/webhooks/{id}/test and mock/send-payment-notification) per customer per minute (0 disables)',
  ),
};

/** The settings, one field per row of SETTINGS, whose description says what it means. */
export type Config = { [K in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[K]['read']> };

/** Rules between variables, which no row can state alone. */
function checkTogether(config: Config): void {
  const { databaseLockTimeoutMs: lock, databaseStatementTimeoutMs: statement } = config;
  if (lock > statement) {
    throw new ConfigError(
      `DATABASE_LOCK_TIMEOUT_MS (${lock}) must not exceed DATABASE_STATEMENT_TIMEOUT_MS (${statement}): the statement would be cancelled first`,
    );
  }
  if (config.secretKeys && config.secretKeysFile)
    throw new ConfigError('FEEGATE_SECRET_KEYS and FEEGATE_SECRET_KEYS_FILE are both set: set one of them');
  if (config.metricsPort === config.port) {
    throw new ConfigError(
      `METRICS_PORT must differ from PORT (${config.port}): metrics are never served on the API port`,
    );
  }
}

export function loadConfig(env: Env = process.env): Config {
  const config = Object.fromEntries(
    Object.entries(SETTINGS).map(([key, setting]) => [key, setting.read(env)]),
  ) as Config;
  checkTogether(config);
  return config;
}

/** Settings for tests and embedding: defaults with overrides, no environment. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  // No webhook delivery unless a test asks for it: a test reaches only the receivers it starts.
  return {
    ...loadConfig({ FEEGATE_SECRET_KEYS: TEST_SECRET_KEYS }),
    logLevel: 'silent',
    loadDemoData: 'never',
    webhookWorker: false,
    // Test processes fill every core: an idle-priority or resting hash would wait for a gap that never comes.
    loginHashIdlePriority: false,
    loginHashCpuPercent: 100,
    ...overrides,
  };
}
