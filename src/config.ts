/**
 * Configuration comes from the environment only, and is read and validated once.
 * A bad value stops the process with a message naming the variable.
 */
import os from 'node:os';
import path from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import { ConfigError } from './errors.js';

export interface Config {
  host: string;
  port: number;
  /** PostgreSQL server; absent means the embedded PGlite database. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** PostgreSQL cancels a statement running longer (statement_timeout); the client gives its connection up a second later. */
  databaseStatementTimeoutMs: number;
  /** A statement waits at most this long for a lock (lock_timeout). */
  databaseLockTimeoutMs: number;
  dataDir: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Refresh tokens of a login live at most this long from the login, however often they are refreshed. */
  sessionMaxAgeSeconds: number;
  /** `iss` of the access tokens (JWT) this service signs and accepts. */
  issuer: string;
  logLevel: string;
  bodyLimitBytes: number;
  /** A request whose headers and body have not fully arrived in this time is answered 408 and its connection closed. */
  requestTimeoutSeconds: number;
  /** Password hashes computed at once; more wait in a queue of loginQueueLimit. */
  loginConcurrency: number;
  loginQueueLimit: number;
  /** Share of a core (percent) each hashing thread may use under sustained load; it rests the remainder after each hash. */
  loginHashCpuPercent: number;
  /** Failed logins per user name and client address within the window before 429 (0 disables). */
  loginMaxFailures: number;
  /** Failed logins per user name from all addresses within the window before 429 (0 disables). */
  loginMaxFailuresPerUser: number;
  loginFailureWindowSeconds: number;
  /** How long a verified API key is trusted from memory (revocation is pushed, this is the fallback). */
  apiKeyCacheTtlMs: number;
  /** How long a listing page is served from memory (key changes are pushed; last_used_at may lag this much). */
  apiKeyListingCacheTtlMs: number;
  /** How often last_used_at updates are written in one batch. */
  lastUsedFlushMs: number;
  /** Load the demo data set into an empty embedded database at start: always (FEEGATE_DEMO=true), never, or only while listening on loopback (unset). */
  loadDemoData: 'always' | 'on-loopback' | 'never';
  /** Proxies in front whose X-Forwarded-For is believed: none, a number of hops, or their addresses and CIDR ranges. */
  trustProxy: false | number | string[];
  /** Redis for counters shared by every instance (rate limits, failed logins); absent: each instance counts alone. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key, so several deployments (or tests) can share one Redis. */
  redisKeyPrefix: string;
  /** Login and refresh requests per client address per minute (0 disables). */
  rateLimitAnonymousPerMinute: number;
  /** Assignment requests (bulk-assign, /all) per customer per minute, whoever sends them (0 disables). */
  assignmentsPerCustomerPerMinute: number;
  /** Prometheus metrics at /metrics on this port (off when undefined); never the API's port. */
  metricsPort: number | undefined;
  metricsHost: string;
}


type Env = Record<string, string | undefined>;

/**
 * Hashes at once by default: one core fewer than the machine has, so argon2 never
 * takes every core from the event loop and the database (more hashes than that buy
 * no more logins a second, only slower answers for everything else;
 * docs/performance.md), and at most 4, since each hash holds 19 MiB.
 */
export function defaultLoginConcurrency(cores = os.availableParallelism()): number {
  return Math.min(4, Math.max(1, cores - 1));
}

/**
 * Logins that may wait per hashing thread: about half a second of argon2 each.
 * A refused login costs CPU too, since clients that ignore Retry-After send it
 * again at once: a shorter queue spends a storm on refusals and gets fewer logins
 * through (docs/performance.md).
 */
export const LOGIN_QUEUE_PER_HASHER = 64;

/**
 * A hashing thread rests after each hash for a third of the time it took, so in a
 * login storm it uses three quarters of a core. Even at SCHED_IDLE a core busy
 * with hashing slows the other requests (a busy loop in argon2's place did the
 * same, so it is the busy core, not argon2's memory traffic); resting leaves them
 * their latency for somewhat fewer logins a second (docs/performance.md). A
 * single login never waits for it: the rest follows the answer.
 */
export const LOGIN_HASH_CPU_PERCENT = 75;

/**
 * Bounds of every PostgreSQL statement and lock wait, so that no connection is
 * held for ever by a hang. A minute leaves the longest statement, /all for
 * 100,000 merchants × 12 plans, several times its time even on a loaded
 * machine (docs/performance.md); five seconds of waiting for a lock is longer
 * than any lock feegate holds is meant to be waited for (a customer's assignments wait in memory,
 * docs/design.md).
 */
export const DATABASE_STATEMENT_TIMEOUT_MS = 60_000;
export const DATABASE_LOCK_TIMEOUT_MS = 5000;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function oneOf(env: Env, name: string, fallback: string, allowed: readonly string[]): string {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw;
}

/**
 * TRUST_PROXY=true would believe the whole X-Forwarded-For, whose left end the
 * client writes itself: every client could choose its address, and with it its
 * per-address limits. So it takes a number of proxies in front (the client is
 * that many entries from the right) or the proxies' addresses (the client is the
 * first address from the right that is not one of them).
 */
function trustProxy(env: Env): Config['trustProxy'] {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '' || /^(false|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new ConfigError(
      "TRUST_PROXY=true is refused: it trusts the client's own X-Forwarded-For, so any client could choose its address; set the number of proxies in front (TRUST_PROXY=1 behind one) or their addresses and CIDR ranges",
    );
  }
  if (/^\d+$/.test(raw)) return integer(env, 'TRUST_PROXY', 0, 0, 20) || false;
  const list = raw.split(',').map((entry) => entry.trim());
  try {
    proxyAddr.compile(list);
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must be false, a number of proxies, or a comma-separated list of proxy addresses and CIDR ranges: ${(err as Error).message}`);
  }
  return list;
}

/** FEEGATE_DEMO=true loads the demo data wherever the server listens; unset, only on loopback. */
function demoData(env: Env): Config['loadDemoData'] {
  if (!env.FEEGATE_DEMO?.trim()) return 'on-loopback';
  return flag(env, 'FEEGATE_DEMO', false) ? 'always' : 'never';
}

function metricsPort(env: Env, apiPort: number): number | undefined {
  if (!env.METRICS_PORT?.trim()) return undefined;
  const port = integer(env, 'METRICS_PORT', 0, 1, 65535);
  if (port === apiPort) throw new ConfigError(`METRICS_PORT must differ from PORT (${apiPort}): metrics are never served on the API port`);
  return port;
}

function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL must be a URL such as postgres://user@host:5432/db');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, got "${url.protocol}//"`);
  }
  return raw;
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL?.trim();
  if (!raw) return undefined;
  if (!/^rediss?:\/\/[^\s]+$/.test(raw)) throw new ConfigError('REDIS_URL must be a URL such as redis://127.0.0.1:6379');
  return raw;
}

function databaseTimeouts(env: Env): Pick<Config, 'databaseStatementTimeoutMs' | 'databaseLockTimeoutMs'> {
  const statement = integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', DATABASE_STATEMENT_TIMEOUT_MS, 1000, 3_600_000);
  const lock = integer(env, 'DATABASE_LOCK_TIMEOUT_MS', DATABASE_LOCK_TIMEOUT_MS, 100, 3_600_000);
  if (lock > statement) {
    throw new ConfigError(`DATABASE_LOCK_TIMEOUT_MS (${lock}) must not exceed DATABASE_STATEMENT_TIMEOUT_MS (${statement}): the statement would be cancelled first`);
  }
  return { databaseStatementTimeoutMs: statement, databaseLockTimeoutMs: lock };
}

export function loadConfig(env: Env = process.env): Config {
  const loginConcurrency = integer(env, 'LOGIN_CONCURRENCY', defaultLoginConcurrency(), 1, 64);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  return {
    host: env.HOST?.trim() || '127.0.0.1',
    port,
    databaseUrl: databaseUrl(env),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    ...databaseTimeouts(env),
    dataDir: path.resolve(env.FEEGATE_DATA_DIR?.trim() || './data'),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 3600, 1, 86_400),
    refreshTokenTtlSeconds: integer(env, 'REFRESH_TOKEN_TTL_SECONDS', 2_592_000, 1, 31_536_000),
    sessionMaxAgeSeconds: integer(env, 'SESSION_MAX_AGE_SECONDS', 2_592_000, 60, 31_536_000),
    issuer: env.FEEGATE_ISSUER?.trim() || 'feegate',
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    requestTimeoutSeconds: integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 3600),
    loginConcurrency,
    loginQueueLimit: integer(env, 'LOGIN_QUEUE_LIMIT', LOGIN_QUEUE_PER_HASHER * loginConcurrency, 0, 10_000),
    loginHashCpuPercent: integer(env, 'LOGIN_HASH_CPU_PERCENT', LOGIN_HASH_CPU_PERCENT, 10, 100),
    loginMaxFailures: integer(env, 'LOGIN_MAX_FAILURES', 10, 0, 1000),
    loginMaxFailuresPerUser: integer(env, 'LOGIN_MAX_FAILURES_PER_USER', 100, 0, 100_000),
    loginFailureWindowSeconds: integer(env, 'LOGIN_FAILURE_WINDOW_SECONDS', 900, 1, 86_400),
    apiKeyCacheTtlMs: integer(env, 'API_KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    apiKeyListingCacheTtlMs: integer(env, 'API_KEY_LISTING_CACHE_TTL_MS', 1000, 0, 3000),
    lastUsedFlushMs: integer(env, 'LAST_USED_FLUSH_MS', 1000, 10, 2000),
    loadDemoData: demoData(env),
    trustProxy: trustProxy(env),
    redisUrl: redisUrl(env),
    redisKeyPrefix: env.REDIS_KEY_PREFIX?.trim() || 'feegate:',
    rateLimitAnonymousPerMinute: integer(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 60, 0, 1_000_000),
    assignmentsPerCustomerPerMinute: integer(env, 'ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE', 30, 0, 100_000),
    metricsPort: metricsPort(env, port),
    metricsHost: env.METRICS_HOST?.trim() || '127.0.0.1',
  };
}

/** Settings for tests and embedding: defaults with overrides, no environment. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), logLevel: 'silent', loadDemoData: 'never', ...overrides };
}
