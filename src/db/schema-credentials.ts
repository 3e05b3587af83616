/** How callers prove who they are: API keys, login sessions and tokens, signing keys, codes, digest keys. */
import { sql } from 'drizzle-orm';
import {
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { Permission } from '../lib/permissions.js';
import { createdAt } from './schema-columns.js';
import { customers, merchants, users } from './schema-accounts.js';

export const apiKeyStatus = pgEnum('api_key_status', ['ENABLED', 'DELETED']);
export const authTokenKind = pgEnum('auth_token_kind', ['access', 'refresh']);
export const apiKeyAccess = pgEnum('api_key_access', ['full', 'read_only']);

/** Single-use recovery codes of a user's TOTP, only an HMAC of their SHA-256 stored (src/lib/sealed-values.ts). */
export const userRecoveryCodes = pgTable(
  'user_recovery_codes',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    codeHash: text('code_hash').notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [primaryKey({ name: 'user_recovery_codes_pk', columns: [t.userId, t.codeHash] })],
);

/** A login that answered a challenge instead of a token: its opaque session, good once, for 5 minutes. */
export const loginChallenges = pgTable(
  'login_challenges',
  {
    sessionHash: text('session_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull().$type<'NEW_PASSWORD_REQUIRED' | 'SOFTWARE_TOKEN_MFA' | 'MFA_SETUP'>(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    check('login_challenges_name', sql`${t.name} IN ('NEW_PASSWORD_REQUIRED', 'SOFTWARE_TOKEN_MFA', 'MFA_SETUP')`),
    index('login_challenges_expiry_idx').on(t.expiresAt),
  ],
);

/** The code of a forgotten password: one live per user, an HMAC of its SHA-256 only, a few attempts. */
export const passwordResetCodes = pgTable('password_reset_codes', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id),
  codeHash: text('code_hash').notNull(),
  attempts: integer('attempts').notNull().default(0),
  expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  createdAt: createdAt(),
});

/**
 * The instants of a user's wrong reset codes and reset mails within the last
 * hour (src/features/users/reset-limits-dal.ts): shared by every instance, and
 * kept apart from the code, so a new code never restarts the count.
 */
export const passwordResetLimits = pgTable('password_reset_limits', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  wrongCodes: timestamp('wrong_codes', { withTimezone: true }).array().notNull().default(sql`'{}'`),
  mails: timestamp('mails', { withTimezone: true }).array().notNull().default(sql`'{}'`),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id),
    // Null for CUSTOMER keys.
    merchantId: uuid('merchant_id'),
    // SHA-256 of the full key, hex. The key itself is never stored.
    keyHash: text('key_hash').notNull().unique('api_keys_key_hash_unique'),
    displayPrefix: text('display_prefix').notNull(),
    last4: text('last4').notNull(),
    status: apiKeyStatus('status').notNull().default('ENABLED'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    // Lifecycle (docs/key-lifecycle.md). A key past expires_at is EXPIRED: computed, never stored.
    name: text('name'),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    access: apiKeyAccess('access').notNull().default('full'),
    rateLimit: integer('rate_limit'),
    rateLimitWindowSeconds: integer('rate_limit_window_seconds'),
    // Set when the key was rolled: it cannot be rolled again (two rolls at once: one wins).
    replacedBy: uuid('replaced_by'),
    // Set on a roll's successor: the first key of its roll chain. The chain shares
    // one rate-limit count, so rolling a key never buys a fresh one. Null: the key
    // starts its own chain.
    rollChainId: uuid('roll_chain_id'),
    // The expires_at that API_KEY_EXPIRING was sent for: once per expiry, again if it is moved.
    expiryWarnedFor: timestamp('expiry_warned_for', { withTimezone: true, precision: 3 }),
    // Who created the key (migration 0016): a login user, an API key or the operator
    // (id and e-mail null); all three null for keys made before it was recorded.
    createdByType: text('created_by_type').$type<'user' | 'api_key' | 'operator'>(),
    createdById: uuid('created_by_id'),
    createdByEmail: text('created_by_email'),
    // Who rolled it, on a roll's successor (migration 0027): they were handed its secret.
    rolledByType: text('rolled_by_type').$type<'user' | 'api_key'>(),
    rolledById: uuid('rolled_by_id'),
    // Restricted keys (migration 0022): catalogue permissions (src/lib/permissions.ts),
    // and the canonical addresses and CIDR ranges it may be used from (empty: any).
    permissions: text('permissions').array().notNull().$type<Permission[]>(),
    allowedIps: text('allowed_ips').array().notNull().default(sql`'{}'`),
  },
  (t) => [
    foreignKey({ name: 'api_keys_replaced_by_fk', columns: [t.replacedBy], foreignColumns: [t.id] }),
    foreignKey({ name: 'api_keys_roll_chain_id_fk', columns: [t.rollChainId], foreignColumns: [t.id] }),
    check('api_keys_name_length', sql`${t.name} IS NULL OR char_length(${t.name}) BETWEEN 1 AND 64`),
    check(
      'api_keys_rate_limit_valid',
      sql`(${t.rateLimit} IS NULL) = (${t.rateLimitWindowSeconds} IS NULL) AND (${t.rateLimit} IS NULL OR (${t.rateLimit} BETWEEN 1 AND 100000 AND ${t.rateLimitWindowSeconds} BETWEEN 1 AND 86400))`,
    ),
    foreignKey({
      name: 'api_keys_merchant_of_customer_fk',
      columns: [t.merchantId, t.customerId],
      foreignColumns: [merchants.id, merchants.customerId],
    }),
    index('api_keys_user_status_idx').on(t.userId, t.status),
    check(
      'api_keys_created_by_type',
      sql`${t.createdByType} IS NULL OR ${t.createdByType} IN ('user', 'api_key', 'operator')`,
    ),
    index('api_keys_created_by_idx').on(t.createdById).where(sql`${t.createdById} IS NOT NULL`),
    check('api_keys_rolled_by_type', sql`${t.rolledByType} IS NULL OR ${t.rolledByType} IN ('user', 'api_key')`),
    // Listings read a page in index order: one partial index per kind of listing,
    // since `merchant_id IS NULL` cannot serve as an equality in a shared index.
    index('api_keys_customer_listing_idx')
      .on(t.customerId, t.status, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.merchantId} IS NULL`),
    index('api_keys_merchant_listing_idx')
      .on(t.merchantId, t.status, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.merchantId} IS NOT NULL`),
    // The sweep for API_KEY_EXPIRING: enabled keys by expiry.
    index('api_keys_expiry_idx')
      .on(t.expiresAt)
      .where(sql`${t.status} = 'ENABLED' AND ${t.expiresAt} IS NOT NULL AND ${t.replacedBy} IS NULL`),
  ],
);

/** A way a login was proven (RFC 8176): the password, a one-time code. */
export type AuthMethod = 'pwd' | 'otp';

/** One login: the family that every access and refresh token descends from. */
export const authSessions = pgTable(
  'auth_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    revokedReason: text('revoked_reason'),
    // How the login was established (RFC 8176): its access tokens carry it as `amr`.
    amr: text('amr').array().notNull().default(sql`'{pwd}'`).$type<AuthMethod[]>(),
  },
  (t) => [
    index('auth_sessions_user_idx').on(t.userId),
    index('auth_sessions_revoked_idx').on(t.revokedAt).where(sql`${t.revokedAt} IS NOT NULL`),
  ],
);

/** Keys that sign access tokens (JWT). The unretired one signs; retired ones verify until their tokens expire. */
export const signingKeys = pgTable(
  'signing_keys',
  {
    kid: text('kid').primaryKey(),
    algorithm: text('algorithm').notNull(),
    publicJwk: jsonb('public_jwk').notNull().$type<Record<string, unknown>>(),
    // Encrypted by the key ring (migration 0015): enc:v1:<kid>:... of the JWK's JSON.
    privateJwk: text('private_jwk').notNull(),
    createdAt: createdAt(),
    retiredAt: timestamp('retired_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [uniqueIndex('signing_keys_one_active_idx').on(sql`(true)`).where(sql`${t.retiredAt} IS NULL`)],
);

export const authTokens = pgTable(
  'auth_tokens',
  {
    // SHA-256 of the opaque token, hex.
    tokenHash: text('token_hash').primaryKey(),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => authSessions.id),
    kind: authTokenKind('kind').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    // Refresh tokens are good once: set when rotated.
    consumedAt: timestamp('consumed_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [index('auth_tokens_session_idx').on(t.sessionId), index('auth_tokens_expiry_idx').on(t.expiresAt)],
);

/** The key of the HMAC kept of reset and recovery codes, encrypted by the key ring (migration 0015). */
export const digestKeys = pgTable('digest_keys', {
  id: text('id').primaryKey(),
  key: text('key').notNull(),
  createdAt: createdAt(),
});
