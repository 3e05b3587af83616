/**
 * Queries of the operator's import. Files of any size: every write is a
 * multi-row statement over a batch of rows sent as ONE JSON parameter
 * (jsonb_to_recordset), so no statement comes near PostgreSQL's 65,535 bind
 * parameters, and the SQL text stays the same small string whatever the batch.
 * Look-ups send their ids as one array parameter. Every function takes an
 * optional transaction.
 */
import type { SQL } from 'drizzle-orm';
import { type Db, queryRows, sql } from '../../db/database.js';
import type { Role } from '../../lib/principal.js';
import { toUuidArray } from '../../lib/uuid-array.js';

/** Rows per statement: big enough that round trips do not dominate, small enough to keep each parameter near a megabyte. */
const IMPORT_BATCH_ROWS = 5_000;

export interface CustomerRow {
  id: string;
  name: string;
}

/** A merchant as the import writes it: `name` is the display name; a field left out (undefined) is kept as it is. */
export interface MerchantRow {
  id: string;
  customer_id: string;
  /** Undefined only for a merchant that exists: it keeps its name. */
  name: string | undefined;
  business_name?: string | undefined;
  fantasy_name?: string | undefined;
  legal_type?: string | undefined;
  country?: string | undefined;
  merchant_code?: string | undefined;
  email?: string | undefined;
  address?: object | undefined;
  tax_identification_type?: string | undefined;
  tax_identification_number?: string | undefined;
  representative?: object | undefined;
  additional_info?: string | undefined;
  phone?: string | undefined;
  activity?: string | undefined;
  category?: string | undefined;
  settlement_condition?: object | undefined;
  financial_info?: object | undefined;
}

/** The import's fields of a merchant that the API added (migrations 0011 and 0018): each kept when the file leaves it out. */
const MERCHANT_FIELDS = [
  'business_name',
  'fantasy_name',
  'legal_type',
  'country',
  'merchant_code',
  'email',
  'address',
  'tax_identification_type',
  'tax_identification_number',
  'representative',
  'additional_info',
  'phone',
  'activity',
  'category',
  'settlement_condition',
  'financial_info',
] as const;
const MERCHANT_RECORD = sql.raw(
  'x(id uuid, customer_id uuid, name text, business_name text, fantasy_name text, legal_type merchant_legal_type, country text, merchant_code text, email text, address jsonb, tax_identification_type text, tax_identification_number text, representative jsonb, additional_info text, phone text, activity text, category text, settlement_condition jsonb, financial_info jsonb)',
);
const MERCHANT_COLUMNS = sql.raw(['id', 'customer_id', 'name', ...MERCHANT_FIELDS].join(', '));
// NOT NULL is checked before ON CONFLICT: a known merchant sent without a name proposes the one it has.
const MERCHANT_VALUES = sql.raw(
  ['x.id', 'x.customer_id', 'COALESCE(x.name, known.name)', ...MERCHANT_FIELDS.map((f) => `x.${f}`)].join(', '),
);
const KEEP_UNLESS_SENT = sql.raw(
  MERCHANT_FIELDS.map((f) => `${f} = COALESCE(excluded.${f}, merchants.${f})`).join(', '),
);

export interface UserRow {
  email: string;
  type: 'CUSTOMER' | 'MERCHANT';
  customer_id: string;
  merchant_id: string | null;
}

export interface LoginUserRow extends UserRow {
  password_hash: string;
  role: Role;
}

export interface PlanRow {
  id: string;
  customer_id: string | null;
  payment_method: string;
  card_brand: string;
  term: number;
  commission: number;
  has_installments: boolean;
  is_international: boolean;
}

/** A user the file names whose existing row it may not change. */
export interface RefusedUser {
  email: string;
  customer_id: string;
}

/** A login user that existed and whose role or password the import changed: their sessions must end. */
export interface ChangedLoginUser {
  id: string;
  roleChanged: boolean;
}

/** Runs `statement` on each batch of `rows` in turn, concatenating what it returns. */
async function inBatches<R, T>(rows: R[], statement: (batch: SQL) => SQL, db: Db): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < rows.length; i += IMPORT_BATCH_ROWS) {
    const batch = sql`${JSON.stringify(rows.slice(i, i + IMPORT_BATCH_ROWS))}::jsonb`;
    // A loop, not push(...rows): a spread of a large array overflows the stack.
    for (const row of await queryRows<T>(db, statement(batch))) out.push(row);
  }
  return out;
}

const USER_RECORD = sql.raw(
  'x(email text, type user_type, customer_id uuid, merchant_id uuid, password_hash text, role user_role)',
);

export function createImportDal(db: Db) {
  return {
    async existingCustomerIds(ids: string[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const rows = await queryRows<{ id: string }>(
        db,
        sql`SELECT id FROM customers WHERE id = ANY(${toUuidArray(ids)}::uuid[])`,
      );
      return rows.map((r) => r.id);
    },

    async merchantOwners(
      ids: string[],
    ): Promise<Array<{ id: string; customerId: string; status: 'ACTIVE' | 'INACTIVE'; country: string | null }>> {
      if (ids.length === 0) return [];
      return queryRows(
        db,
        sql`SELECT id, customer_id AS "customerId", status, country FROM merchants WHERE id = ANY(${toUuidArray(ids)}::uuid[])`,
      );
    },

    async plansByIds(ids: string[]): Promise<PlanRow[]> {
      if (ids.length === 0) return [];
      return queryRows(
        db,
        sql`SELECT id, customer_id, payment_method, card_brand, term, commission::float8 AS commission, has_installments, is_international
            FROM payment_plans WHERE id = ANY(${toUuidArray(ids)}::uuid[])`,
      );
    },

    async upsertCustomers(rows: CustomerRow[]): Promise<void> {
      await inBatches(
        rows,
        (batch) => sql`
        INSERT INTO customers (id, name)
        SELECT id, name FROM jsonb_to_recordset(${batch}) AS x(id uuid, name text)
        ON CONFLICT (id) DO UPDATE SET name = excluded.name`,
        db,
      );
    },

    /**
     * A merchant keeps its customer: the service refuses a file that would move
     * one. Fields the file leaves out keep their values; the display name
     * follows the names the merchant then has.
     */
    async upsertMerchants(rows: MerchantRow[]): Promise<void> {
      await inBatches(
        rows,
        (batch) => sql`
        INSERT INTO merchants (${MERCHANT_COLUMNS})
        SELECT ${MERCHANT_VALUES} FROM jsonb_to_recordset(${batch}) AS ${MERCHANT_RECORD}
        LEFT JOIN merchants known ON known.id = x.id
        ON CONFLICT (id) DO UPDATE SET ${KEEP_UNLESS_SENT},
          name = COALESCE(excluded.fantasy_name, merchants.fantasy_name, excluded.business_name, merchants.business_name, excluded.name, merchants.name),
          updated_at = now()`,
        db,
      );
    },

    /** Merchants of these customers that hold these codes: (customer_id, merchant_code) pairs. */
    async merchantsWithCodes(codes: Array<{ customer_id: string; merchant_code: string }>) {
      if (codes.length === 0) return [];
      return queryRows<{ id: string; customer_id: string; merchant_code: string }>(
        db,
        sql`SELECT m.id, m.customer_id, m.merchant_code FROM merchants m
            JOIN jsonb_to_recordset(${JSON.stringify(codes)}::jsonb) AS x(customer_id uuid, merchant_code text)
              ON m.customer_id = x.customer_id AND m.merchant_code = x.merchant_code`,
      );
    },

    /**
     * Login users, by e-mail on the platform: a new one is created, a known one
     * of the same customer gets the file's password hash and role. A known one of
     * another customer is left alone and returned as refused: the caller refuses
     * the file. The guard is part of the upsert, so a user created meanwhile is
     * judged too. `changed` are the known ones whose role or hash it replaced
     * (the statement's snapshot, `known`, holds them as they were).
     */
    async upsertLoginUsers(rows: LoginUserRow[]): Promise<{ refused: RefusedUser[]; changed: ChangedLoginUser[] }> {
      const written = await inBatches<LoginUserRow, RefusedUser & ChangedLoginUser & { changed: boolean }>(
        rows,
        (batch) => sql`
        WITH x AS (SELECT * FROM jsonb_to_recordset(${batch}) AS ${USER_RECORD}),
        known AS (
          SELECT u.id, u.role, u.password_hash FROM users u JOIN x ON u.email = x.email WHERE u.password_hash IS NOT NULL
        ), written AS (
          INSERT INTO users (email, type, customer_id, merchant_id, password_hash, role)
          SELECT email, type, customer_id, merchant_id, password_hash, role FROM x
          ON CONFLICT (email) WHERE password_hash IS NOT NULL
          DO UPDATE SET password_hash = excluded.password_hash, role = excluded.role, updated_at = now()
            WHERE users.customer_id = excluded.customer_id AND users.type = excluded.type
            AND users.merchant_id IS NOT DISTINCT FROM excluded.merchant_id
          RETURNING id, email, customer_id, role, password_hash
        )
        SELECT w.email, w.customer_id, w.id,
          k.id IS NOT NULL AND (k.role <> w.role OR k.password_hash <> w.password_hash) AS changed,
          k.role IS DISTINCT FROM w.role AS "roleChanged"
        FROM written w LEFT JOIN known k ON k.id = w.id`,
        db,
      );
      return {
        refused: notWritten(rows, written),
        changed: written.filter((w) => w.changed).map((w) => ({ id: w.id, roleChanged: w.roleChanged })),
      };
    },

    /**
     * Integration users, by (customer, e-mail): a new one is created, a known one
     * of the same type and merchant stays as it is. One of another type or
     * merchant is left alone and returned: the caller refuses the file.
     */
    async upsertIntegrationUsers(rows: UserRow[]): Promise<RefusedUser[]> {
      const written = await inBatches<UserRow, RefusedUser>(
        rows,
        (batch) => sql`
        INSERT INTO users (email, type, customer_id, merchant_id)
        SELECT email, type, customer_id, merchant_id FROM jsonb_to_recordset(${batch}) AS ${USER_RECORD}
        ON CONFLICT (customer_id, email) WHERE password_hash IS NULL
        DO UPDATE SET type = excluded.type
          WHERE users.type = excluded.type AND users.merchant_id IS NOT DISTINCT FROM excluded.merchant_id
        RETURNING email, customer_id`,
        db,
      );
      return notWritten(rows, written);
    },

    /** An empty database is one without customers: where the demo data may go. */
    async hasNoCustomers(): Promise<boolean> {
      const rows = await queryRows<{ id: string }>(db, sql`SELECT id FROM customers LIMIT 1`);
      return rows.length === 0;
    },

    /** The password hashes of those of `emails` that are login users (the import's known passwords, the start-up check of the demo users). */
    async loginPasswordHashes(emails: string[]): Promise<Array<{ email: string; passwordHash: string }>> {
      const list = sql`${JSON.stringify(emails)}::jsonb`;
      return queryRows(
        db,
        sql`
        SELECT email, password_hash AS "passwordHash" FROM users
        WHERE password_hash IS NOT NULL AND email IN (SELECT jsonb_array_elements_text(${list}))`,
      );
    },

    async upsertPaymentPlans(rows: PlanRow[]): Promise<void> {
      await inBatches(
        rows,
        (batch) => sql`
        INSERT INTO payment_plans (id, customer_id, payment_method, card_brand, term, commission, has_installments, is_international)
        SELECT id, customer_id, payment_method, card_brand, term, commission, has_installments, is_international
        FROM jsonb_to_recordset(${batch})
          AS x(id uuid, customer_id uuid, payment_method text, card_brand text, term integer, commission numeric, has_installments boolean, is_international boolean)
        ON CONFLICT (id) DO UPDATE SET
          customer_id = excluded.customer_id, payment_method = excluded.payment_method, card_brand = excluded.card_brand,
          term = excluded.term, commission = excluded.commission,
          has_installments = excluded.has_installments, is_international = excluded.is_international`,
        db,
      );
    },
  };
}

/** The rows an upsert did not return: those its guard refused. */
function notWritten(rows: UserRow[], written: RefusedUser[]): RefusedUser[] {
  if (written.length === rows.length) return [];
  const done = new Set(written.map((w) => `${w.customer_id}|${w.email}`));
  return rows
    .filter((r) => !done.has(`${r.customer_id}|${r.email}`))
    .map((r) => ({ email: r.email, customer_id: r.customer_id }));
}

export type ImportDal = ReturnType<typeof createImportDal>;
