/**
 * The whole data model. Later features add behaviour, not tables.
 * Integrity lives in the database: foreign keys, checks and unique indexes make
 * corrupt states impossible even if a code path forgets a rule.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow();

export const userType = pgEnum('user_type', ['CUSTOMER', 'MERCHANT']);
export const apiKeyStatus = pgEnum('api_key_status', ['ENABLED', 'DELETED']);
export const authTokenKind = pgEnum('auth_token_kind', ['access', 'refresh']);
export const apiKeyAccess = pgEnum('api_key_access', ['full', 'read_only']);
export const merchantStatus = pgEnum('merchant_status', ['ACTIVE', 'INACTIVE']);
export const merchantLegalType = pgEnum('merchant_legal_type', ['NATURAL_PERSON', 'LEGAL_ENTITY']);

/** A merchant's address and representative, stored as the API answers them (migration 0011). */
export interface MerchantAddress {
  state: string;
  city: string;
  zip: string;
  street: string;
  number: string;
  floor?: string | null;
  apartment?: string | null;
  /** The platform's v2 map position (migration 0018): both or neither. */
  location?: { lat: number; lng: number };
}
export interface MerchantRepresentative {
  type: 'PRESIDENT' | 'PROXY' | 'OTHER';
  name: string;
  surname: string;
  identification: { type: string; number: string };
  email: string;
  phone: string;
  /** ISO 8601 date, from the platform's v1 shape (migration 0018). */
  birth_date?: string;
}
/** The platform's v1 settlement terms (migration 0018), strings as it sends them. */
export interface MerchantSettlementCondition {
  transaction_fee: string;
  settlement: string;
  cbu_or_cvu: string;
}
export const userRole = pgEnum('user_role', ['ADMIN', 'MEMBER', 'VIEWER']);

export const customers = pgTable('customers', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  createdAt: createdAt(),
  // Every login of its users must pass a TOTP code (migration 0010).
  requireMfa: boolean('require_mfa').notNull().default(false),
});

export const merchants = pgTable(
  'merchants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id),
    // The display name: fantasy_name, else business_name (merchants made before migration 0011: their only name).
    name: text('name').notNull(),
    createdAt: createdAt(),
    // Migration 0011: the platform's fields, null for merchants made before it.
    status: merchantStatus('status').notNull().default('ACTIVE'),
    businessName: text('business_name'),
    fantasyName: text('fantasy_name'),
    legalType: merchantLegalType('legal_type'),
    country: text('country'),
    merchantCode: text('merchant_code'),
    email: text('email'),
    address: jsonb('address').$type<MerchantAddress>(),
    // Stored in its compact form (digits; an RFC upper-case), checked by the service.
    taxIdentificationType: text('tax_identification_type'),
    taxIdentificationNumber: text('tax_identification_number'),
    representative: jsonb('representative').$type<MerchantRepresentative>(),
    additionalInfo: text('additional_info'),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    // Migration 0018: the platform's v1 fields v2 has no column for (tax.type is financial_info.tax_condition).
    phone: text('phone'),
    activity: text('activity'),
    category: text('category'),
    settlementCondition: jsonb('settlement_condition').$type<MerchantSettlementCondition>(),
    financialInfo: jsonb('financial_info').$type<Record<string, string>>(),
  },
  (t) => [
    // Target of composite foreign keys: "this merchant belongs to that customer".
    unique('merchants_id_customer_unique').on(t.id, t.customerId),
    index('merchants_customer_listing_idx').on(t.customerId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    check('merchants_country_known', sql`${t.country} IN ('ARG', 'MEX')`),
    check(
      'merchants_tax_identification_fits_country',
      sql`(${t.taxIdentificationType} IS NULL) = (${t.taxIdentificationNumber} IS NULL) AND (${t.taxIdentificationType} IS NULL OR (${t.country}, ${t.taxIdentificationType}) IN (('ARG', 'CUIT'), ('MEX', 'RFC')))`,
    ),
    // Unique within a customer, so concurrent creates with one code cannot both commit.
    uniqueIndex('merchants_customer_code_unique')
      .on(t.customerId, t.merchantCode)
      .where(sql`${t.merchantCode} IS NOT NULL`),
  ],
);

/**
 * Two kinds of user, told apart by the password (migration 0007). A login user
 * has one and logs in by e-mail, so its e-mail is unique on the platform. An
 * integration user has none and only holds API keys; each customer has its own
 * (docs/api.md#operations), so its e-mail is unique within its customer only and
 * the same address may be a login user too: the two access forms stay apart.
 */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // Stored lower-cased.
    email: text('email').notNull(),
    type: userType('type').notNull(),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id),
    merchantId: uuid('merchant_id'),
    // PHC string (argon2id); null for integration users that only hold API keys.
    passwordHash: text('password_hash'),
    createdAt: createdAt(),
    // Back-office users (migration 0010). A login user has a role; an integration user none.
    role: userRole('role'),
    name: text('name'),
    description: text('description'),
    // A disabled login user cannot log in; a disabled integration user's keys are refused.
    enabled: boolean('enabled').notNull().default(true),
    // FORCE_CHANGE_PASSWORD: the password is a temporary one, changed at the next login.
    mustChangePassword: boolean('must_change_password').notNull().default(false),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    // TOTP (RFC 6238): the base32 secret, active once a first code was verified.
    totpSecret: text('totp_secret'),
    totpEnabled: boolean('totp_enabled').notNull().default(false),
    // The last time step whose code was accepted: no code is accepted twice.
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
  },
  (t) => [
    foreignKey({
      name: 'users_merchant_of_customer_fk',
      columns: [t.merchantId, t.customerId],
      foreignColumns: [merchants.id, merchants.customerId],
    }),
    check('users_type_matches_merchant', sql`(${t.type} = 'MERCHANT') = (${t.merchantId} IS NOT NULL)`),
    uniqueIndex('users_login_email_unique').on(t.email).where(sql`${t.passwordHash} IS NOT NULL`),
    uniqueIndex('users_integration_email_unique').on(t.customerId, t.email).where(sql`${t.passwordHash} IS NULL`),
    check('users_role_of_login_users', sql`(${t.role} IS NULL) = (${t.passwordHash} IS NULL)`),
    check('users_name_length', sql`${t.name} IS NULL OR char_length(${t.name}) BETWEEN 1 AND 200`),
    check('users_description_length', sql`${t.description} IS NULL OR char_length(${t.description}) <= 1000`),
    check('users_totp_enabled_has_secret', sql`NOT ${t.totpEnabled} OR ${t.totpSecret} IS NOT NULL`),
    index('users_customer_listing_idx').on(t.customerId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
  ],
);

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

/**
 * Mail waiting to be sent (src/features/mail/mail-dal.ts): written in the
 * transaction that asks for it, sent by a background worker, deleted once sent
 * (it may hold a temporary password or a code), retried with a growing pause.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    body: text('body').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    createdAt: createdAt(),
  },
  (t) => [index('mail_outbox_due_idx').on(t.nextAttemptAt)],
);

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
    // Encrypted by the key ring (migration 0015): enc:v1:<kid>:… of the JWK's JSON.
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

export const paymentPlans = pgTable(
  'payment_plans',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // Null for a platform plan, offered to every customer.
    customerId: uuid('customer_id').references(() => customers.id),
    paymentMethod: text('payment_method').notNull(),
    cardBrand: text('card_brand').notNull(),
    term: integer('term').notNull(),
    // Exact decimal: money-adjacent values are never floats.
    commission: numeric('commission', { precision: 12, scale: 4 }).notNull(),
    hasInstallments: boolean('has_installments').notNull(),
    isInternational: boolean('is_international').notNull(),
    // ACTIVE or RETIRED (migration 0012): a retired plan is no longer assignable, but merchants keep it.
    status: text('status').notNull().default('ACTIVE'),
    retiredAt: timestamp('retired_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    check('payment_plans_status', sql`${t.status} IN ('ACTIVE', 'RETIRED')`),
    check(
      'payment_plans_codes',
      sql`${t.paymentMethod} ~ '^[A-Z0-9_]{1,32}$' AND ${t.cardBrand} ~ '^[A-Z0-9_]{1,32}$'`,
    ),
    check('payment_plans_term_non_negative', sql`${t.term} >= 0`),
    check('payment_plans_commission_non_negative', sql`${t.commission} >= 0`),
    index('payment_plans_customer_idx').on(t.customerId),
  ],
);

/**
 * Which plans each merchant holds. Its references to merchants and payment plans
 * are enforced by statement-level triggers (migration 0002) rather than foreign
 * keys: a foreign key checks each inserted row on its own, which for one
 * assignment to 100,000 merchants is 2.4 million lookups; the triggers check
 * (and KEY SHARE-lock) the distinct parents once per statement, with the same
 * guarantees, including on delete of a merchant or plan still assigned.
 */
export const merchantPaymentPlans = pgTable(
  'merchant_payment_plans',
  {
    merchantId: uuid('merchant_id').notNull(),
    paymentPlanId: uuid('payment_plan_id').notNull(),
    // The statement's time, not the transaction's: see merchantPaymentPlanHistory.
    assignedAt: timestamp('assigned_at', { withTimezone: true, precision: 3 })
      .notNull()
      .default(sql`statement_timestamp()`),
  },
  (t) => [
    // No index by plan: nothing on the request path asks "who holds plan X", and
    // each index costs every assignment row (docs/performance.md).
    primaryKey({ name: 'merchant_payment_plans_pk', columns: [t.merchantId, t.paymentPlanId] }),
  ],
);

/**
 * Fee rules over time (migration 0006): every assignment that ended, as the
 * closed interval [assigned_at, removed_at). merchant_payment_plans stays the
 * present (is_selected and the catalogue read only it); a past instant T is
 * the present rows with assigned_at <= T plus the history rows with
 * assigned_at <= T < removed_at, both by merchant through an index: one query.
 * Only removals write here (a statement-level trigger on merchant_payment_plans,
 * in the transaction of the change, whatever deletes the rows), so assigning
 * costs nothing more; replacing costs one row per plan replaced. Updates of
 * merchant_payment_plans are refused, and a merchant or plan named here cannot
 * be deleted. Times are the statement's, taken after the customer's assignment
 * lock: successive changes never overlap. docs/fee-rules-history.md has the costs.
 */
export const merchantPaymentPlanHistory = pgTable(
  'merchant_payment_plan_history',
  {
    merchantId: uuid('merchant_id').notNull(),
    paymentPlanId: uuid('payment_plan_id').notNull(),
    assignedAt: timestamp('assigned_at', { withTimezone: true, precision: 3 }).notNull(),
    removedAt: timestamp('removed_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    check('merchant_payment_plan_history_interval', sql`${t.removedAt} >= ${t.assignedAt}`),
    // From the most recent end, with every column the query reads: index-only.
    index('merchant_payment_plan_history_at_idx').on(t.merchantId, t.removedAt, t.assignedAt, t.paymentPlanId),
  ],
);

/**
 * Changes of a customer's fee rules scheduled for an instant (migration 0012):
 * PENDING until an instance claims it (FOR UPDATE SKIP LOCKED) and applies it in
 * one transaction, then APPLIED with its `outcome`; or CANCELLED. `actor` and
 * `request_id` are whoever scheduled it: the applied change is attributed to them.
 */
export const scheduledFeeRuleChanges = pgTable(
  'scheduled_fee_rule_changes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    customerId: uuid('customer_id').notNull(),
    kind: text('kind').notNull(),
    // Null for ALL: the customer's merchants of the instant it applies.
    merchantIds: uuid('merchant_ids').array(),
    paymentPlanIds: uuid('payment_plan_ids').array().notNull(),
    effectiveAt: timestamp('effective_at', { withTimezone: true, precision: 3 }).notNull(),
    status: text('status').notNull().default('PENDING'),
    actor: jsonb('actor').notNull(),
    requestId: text('request_id'),
    outcome: jsonb('outcome'),
    appliedAt: timestamp('applied_at', { withTimezone: true, precision: 3 }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    // Named as migration 0012 made it (PostgreSQL's default name), not as drizzle would.
    foreignKey({
      name: 'scheduled_fee_rule_changes_customer_id_fkey',
      columns: [t.customerId],
      foreignColumns: [customers.id],
    }),
    check(
      'scheduled_fee_rule_changes_kind',
      sql`${t.kind} IN ('BULK', 'ALL') AND (${t.kind} = 'ALL') = (${t.merchantIds} IS NULL)`,
    ),
    check('scheduled_fee_rule_changes_status', sql`${t.status} IN ('PENDING', 'APPLIED', 'CANCELLED')`),
    index('scheduled_fee_rule_changes_due_idx').on(t.effectiveAt, t.id).where(sql`${t.status} = 'PENDING'`),
    index('scheduled_fee_rule_changes_customer_idx').on(
      t.customerId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

/** Every change, written in the same transaction as the change itself. */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    requestId: text('request_id'),
    // 'user' (token), 'api_key' or 'operator' (command line).
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id'),
    customerId: uuid('customer_id'),
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id'),
    details: jsonb('details').notNull().default({}),
  },
  (t) => [
    // GET /v1/audit-events: a customer's events newest first, all or of one action.
    index('audit_events_customer_listing_idx').on(
      t.customerId,
      t.occurredAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('audit_events_customer_action_idx').on(
      t.customerId,
      t.action,
      t.occurredAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

/**
 * The outbox of domain events (src/features/events/events-dal.ts): written by the
 * transaction of the change each reports; webhook delivery reads it.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    type: text('type').notNull(),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id),
    requestId: text('request_id'),
    data: jsonb('data').notNull(),
    createdAt: createdAt(),
    // Set once the event's webhook deliveries are written (src/features/webhooks/webhooks-dal.ts).
    fannedOutAt: timestamp('fanned_out_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('domain_events_customer_idx').on(t.customerId, t.createdAt),
    index('domain_events_pending_fan_out_idx').on(t.createdAt).where(sql`${t.fannedOutAt} IS NULL`),
  ],
);

/**
 * A customer's webhook subscriptions (docs/webhooks.md). The secret signs
 * deliveries and is never answered; after a PATCH of it the previous one signs
 * beside it until previous_secret_expires_at.
 */
export const webhookSubscriptions = pgTable(
  'webhook_subscriptions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    customerId: uuid('customer_id').notNull(),
    notificationUrl: text('notification_url').notNull(),
    notificationTypes: text('notification_types').array().notNull(),
    status: text('status', { enum: ['ENABLED', 'DISABLED'] })
      .notNull()
      .default('ENABLED'),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
    // When its deliveries started failing without a success since; null while they succeed.
    failingSince: timestamp('failing_since', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // The foreign keys of the webhook tables are named as migration 0013 made them (PostgreSQL's default names).
    foreignKey({
      name: 'webhook_subscriptions_customer_id_fkey',
      columns: [t.customerId],
      foreignColumns: [customers.id],
    }),
    check('webhook_subscriptions_status_check', sql`${t.status} IN ('ENABLED', 'DISABLED')`),
    index('webhook_subscriptions_customer_listing_idx').on(
      t.customerId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
  ],
);

/**
 * One event to one subscription: the durable queue of delivery attempts,
 * claimed with FOR UPDATE SKIP LOCKED. `claimed_until` is the lease of the
 * instance attempting it; an instance that dies leaves it to be claimed again.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    subscriptionId: uuid('subscription_id').notNull(),
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status', { enum: ['PENDING', 'SUCCEEDED', 'FAILED'] })
      .notNull()
      .default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    claimedUntil: timestamp('claimed_until', { withTimezone: true, precision: 3 }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, precision: 3 }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      name: 'webhook_deliveries_subscription_id_fkey',
      columns: [t.subscriptionId],
      foreignColumns: [webhookSubscriptions.id],
    }).onDelete('cascade'),
    foreignKey({ name: 'webhook_deliveries_event_id_fkey', columns: [t.eventId], foreignColumns: [domainEvents.id] }),
    check('webhook_deliveries_status_check', sql`${t.status} IN ('PENDING', 'SUCCEEDED', 'FAILED')`),
    unique('webhook_deliveries_subscription_event_unique').on(t.subscriptionId, t.eventId),
    index('webhook_deliveries_listing_idx').on(
      t.subscriptionId,
      t.createdAt.desc().nullsFirst(),
      t.id.desc().nullsFirst(),
    ),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'PENDING'`),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);

/** The key of the HMAC kept of reset and recovery codes, encrypted by the key ring (migration 0015). */
export const digestKeys = pgTable('digest_keys', {
  id: text('id').primaryKey(),
  key: text('key').notNull(),
  createdAt: createdAt(),
});
