/**
 * The bench data set, written before the server starts: the customers, their
 * login users and the plan catalogue through the operator's import service (the
 * code path operators use), and their merchants with one set-based INSERT ...
 * SELECT generate_series. The bulk-assignment populations belong to bench/fee-rules.ts.
 */
import pg from 'pg';
import { seedAuditRecords } from './audit-export.js';
import { loadConfig } from '../src/config.js';
import { type Db, sql } from '../src/db/database.js';
import type { ImportDocument } from '../src/features/operator/import-schema.js';
import { openConfiguredDatabase } from '../src/server.js';
import { createServices } from '../src/services.js';

export interface Login {
  user: string;
  password: string;
}

export interface SeedData {
  /** The customer whose users hold the 1,000 API keys and whose login is stormed. */
  main: { customerId: string; login: Login; planIds: string[] };
  /** A customer with WIDE_MERCHANTS merchants, whose listing is read a full page at a time. */
  wide: { customerId: string; login: Login };
  /**
   * With `scheduledAll`: a customer with SCHEDULED_ALL_MERCHANTS merchants, each
   * holding 3 plans of which the main plans replace 2 and keep 1 (the shape of
   * bench/fee-rules.ts), for a scheduled /all applied by the service's worker.
   */
  bulk?: { customerId: string; login: Login; merchants: number };
}

export const SCHEDULED_ALL_MERCHANTS = 100_000;

const MERCHANTS = 50;
/** Enough for ten full pages: what an integration asking for size=10000 finds. */
export const WIDE_MERCHANTS = 12_000;
const PASSWORD = 'bench-password-1';

const id = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;

export function benchDocument(): { doc: ImportDocument; data: SeedData } {
  const planIds = Array.from({ length: 12 }, (_, i) => id('e0000000', i + 1));
  const main = { customerId: id('c0000000', 1), login: { user: 'owner@bench.test', password: PASSWORD }, planIds };
  const wide = { customerId: id('c0000000', 2), login: { user: 'owner@wide.bench.test', password: PASSWORD } };
  const doc: ImportDocument = {
    customers: [
      { id: main.customerId, name: 'Bench main' },
      { id: wide.customerId, name: 'Bench wide' },
    ],
    users: [main, wide].map(({ customerId, login }) => ({
      email: login.user,
      type: 'CUSTOMER' as const,
      customer_id: customerId,
      password: login.password,
    })),
    // A catalogue the service carries while it runs: VISA credit, one plan per term.
    payment_plans: planIds.map((planId, i) => ({
      id: planId,
      payment_method: 'CREDIT',
      card_brand: 'VISA',
      term: i + 1,
      commission: Math.round((2.99 + 0.45 * i) * 100) / 100,
      has_installments: i > 0,
      is_international: false,
    })),
  };
  return { doc, data: { main, wide } };
}

/** Seeds the database named by `env` (DATABASE_URL or FEEGATE_DATA_DIR) and closes it again. */
export async function seedDatabase(
  env: Record<string, string>,
  options: { scheduledAll?: boolean; auditRecords?: boolean } = {},
): Promise<SeedData> {
  const config = loadConfig({ ...env, LOG_LEVEL: 'warn' });
  const database = await openConfiguredDatabase(config);
  const services = createServices(config, database);
  try {
    const { doc, data } = benchDocument();
    await services.importer.importDocument(doc);
    for (const [customerId, count] of [
      [data.main.customerId, MERCHANTS],
      [data.wide.customerId, WIDE_MERCHANTS],
    ] as const) {
      await database.db.execute(sql`
        INSERT INTO merchants (id, customer_id, name)
        SELECT gen_random_uuid(), ${customerId}::uuid, 'Bench merchant ' || g
        FROM generate_series(1, ${count}::int) AS g`);
    }
    if (options.scheduledAll) data.bulk = await seedScheduledAll(services, database);
    if (options.auditRecords) await seedAuditRecords(database.db, data.wide.customerId);
    await database.db.execute(sql`ANALYZE`);
    return data;
  } finally {
    await services.stop();
    await database.close();
  }
}

/** The customer of the scheduled /all: its login, merchants, old plans and their assignments. */
async function seedScheduledAll(
  services: ReturnType<typeof createServices>,
  database: Awaited<ReturnType<typeof openConfiguredDatabase>>,
): Promise<NonNullable<SeedData['bulk']>> {
  const bulk = {
    customerId: id('c0000000', 3),
    login: { user: 'owner@scheduled.bench.test', password: PASSWORD },
    merchants: SCHEDULED_ALL_MERCHANTS,
  };
  await services.importer.importDocument({
    customers: [{ id: bulk.customerId, name: 'Bench scheduled /all' }],
    users: [{ email: bulk.login.user, type: 'CUSTOMER', customer_id: bulk.customerId, password: bulk.login.password }],
  });
  await database.db.execute(sql`
    INSERT INTO merchants (id, customer_id, name)
    SELECT gen_random_uuid(), ${bulk.customerId}::uuid, 'Scheduled merchant ' || g
    FROM generate_series(1, ${bulk.merchants}::int) AS g`);
  await holdReplaceablePlans(database.db, bulk.customerId);
  return bulk;
}

/**
 * What every merchant of `customerId` holds before a bench /all of the main
 * plans: an old VISA credit 1x rate and an old 3x installment rate (both
 * replaced) and a debit plan (kept). Shared by bench/fee-rules.ts and line 5c.
 */
export async function holdReplaceablePlans(db: Db, customerId: string): Promise<void> {
  const old = [id('e0000000', 101), id('e0000000', 103), id('e0000000', 200)];
  await db.execute(sql`
    INSERT INTO payment_plans (id, payment_method, card_brand, term, commission, has_installments, is_international) VALUES
      (${old[0]}, 'CREDIT', 'VISA', 1, 2.99, false, false),
      (${old[1]}, 'CREDIT', 'VISA', 3, 3.89, true, false),
      (${old[2]}, 'DEBIT', 'VISA', 0, 1.49, false, false)`);
  await db.execute(sql`
    INSERT INTO merchant_payment_plans (merchant_id, payment_plan_id)
    SELECT m.id, p.id FROM merchants m
    CROSS JOIN (VALUES (${old[0]}::uuid), (${old[1]}::uuid), (${old[2]}::uuid)) AS p(id)
    WHERE m.customer_id = ${customerId}::uuid`);
}

/** Creates (or re-creates) a PostgreSQL database through the server's maintenance database. */
export async function recreatePgDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  });
}

export async function dropPgDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  );
}

async function withAdmin(adminUrl: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
