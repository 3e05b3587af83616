/** Customers, their merchants and their users: who everything else belongs to. */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  jsonb,
  pgEnum,
  pgTable,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt } from './schema-columns.js';

export const userType = pgEnum('user_type', ['CUSTOMER', 'MERCHANT']);
export const merchantStatus = pgEnum('merchant_status', ['ACTIVE', 'INACTIVE']);
export const merchantLegalType = pgEnum('merchant_legal_type', ['NATURAL_PERSON', 'LEGAL_ENTITY']);
export const userRole = pgEnum('user_role', ['ADMIN', 'MEMBER', 'VIEWER']);

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

export const customers = pgTable(
  'customers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    createdAt: createdAt(),
    // Every login of its users must pass a TOTP code (migration 0010).
    requireMfa: boolean('require_mfa').notNull().default(false),
    // NONE or REQUIRED (migration 0023): whether its fee changes wait for a second ADMIN's approval.
    feeChangeApproval: text('fee_change_approval').notNull().default('NONE'),
  },
  (t) => [check('customers_fee_change_approval', sql`${t.feeChangeApproval} IN ('NONE', 'REQUIRED')`)],
);

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
