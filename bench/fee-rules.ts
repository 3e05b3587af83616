/**
 * Benchmark of POST /v1/fee-rules/bulk-assign/all: one customer with 10,000 and
 * then 100,000 merchants, 12 plans sent, existing assignments to replace and to
 * keep. Budget: 100,000 merchants × 12 plans in ≤ 8 s on PostgreSQL.
 *
 *   node --import tsx bench/fee-rules.ts              # PostgreSQL (BENCH_ADMIN_URL or local postgres)
 *   node --import tsx bench/fee-rules.ts --embedded   # in-memory PGlite
 *
 * `runFeeRulesBench` is exported for the main benchmark (bench/run.ts).
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { testConfig } from '../src/config.js';
import { type Database, openDatabase, sql } from '../src/db/database.js';
import type { Principal } from '../src/features/auth/principal.js';
import { createServices } from '../src/services.js';
import { dropPgDatabase, recreatePgDatabase } from './seed.js';

export interface FeeRulesBenchOptions {
  /** In-memory PGlite instead of a PostgreSQL server. */
  embedded?: boolean;
  /** Server to create the scratch database on (default postgres://postgres@127.0.0.1:5432/postgres). */
  adminUrl?: string;
  /** Merchant counts, measured in this order (default 10,000 then 100,000). */
  merchantCounts?: number[];
  log?: (line: string) => void;
}

export interface FeeRulesBenchFigure {
  merchants: number;
  plans: number;
  seconds: number;
  /** Assignments written (added + removed) per second. */
  rowsPerSecond: number;
  added: number;
  removed: number;
}

export interface FeeRulesBenchResult {
  driver: 'postgres' | 'pglite';
  budgetSeconds: number;
  figures: FeeRulesBenchFigure[];
}

// One per process: two bench runs on one server must not drop each other's database.
const DB_NAME = `feegate_bench_fee_${process.pid}`;
const CUSTOMER = 'c0000000-0000-4000-8000-00000000bec0';
const PLANS_SENT = 12;
export const FEE_RULES_BUDGET_SECONDS = 8;

/** Fixed plan ids: n < 100 are the plans sent, n ≥ 100 the ones merchants already hold. */
const planId = (n: number) => `e0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function scratchDatabase(options: FeeRulesBenchOptions): Promise<{ database: Database; drop(): Promise<void> }> {
  if (options.embedded) {
    const database = await openDatabase({ dataDir: 'memory://' });
    await database.migrate();
    return { database, drop: () => database.close() };
  }
  const adminUrl = options.adminUrl ?? process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  await recreatePgDatabase(adminUrl, DB_NAME);
  const url = new URL(adminUrl);
  url.pathname = `/${DB_NAME}`;
  const database = await openDatabase({ databaseUrl: url.toString() });
  await database.migrate();
  return {
    database,
    async drop() {
      await database.close();
      await dropPgDatabase(adminUrl, DB_NAME);
    },
  };
}

/**
 * One customer, `merchantCount` merchants, the catalogue, and current assignments:
 * every merchant holds an old VISA credit 1x rate and an old 3x installment rate
 * (both replaced by the plans sent) and a debit plan (kept). Set-based inserts only.
 */
async function seed(database: Database, merchantCount: number): Promise<void> {
  const { db } = database;
  await db.execute(sql.raw('TRUNCATE audit_events, merchant_payment_plans, payment_plans, merchants, customers CASCADE'));
  await db.execute(sql`INSERT INTO customers (id, name) VALUES (${CUSTOMER}, 'Bench customer')`);
  await db.execute(sql`
    INSERT INTO merchants (id, customer_id, name, created_at)
    SELECT ('d0000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, ${CUSTOMER}, 'Merchant ' || n,
           now() - make_interval(secs => n)
    FROM generate_series(1, ${merchantCount}::int) AS n`);
  // Sent: VISA credit 1x, and 2x..12x installments (same kind, different terms).
  await db.execute(sql`
    INSERT INTO payment_plans (id, payment_method, card_brand, term, commission, has_installments, is_international)
    SELECT ('e0000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'CREDIT', 'VISA', n, 2.49 + 0.4 * (n - 1), n > 1, false
    FROM generate_series(1, ${PLANS_SENT}::int) AS n`);
  await db.execute(sql`
    INSERT INTO payment_plans (id, payment_method, card_brand, term, commission, has_installments, is_international) VALUES
      (${planId(101)}, 'CREDIT', 'VISA', 1, 2.99, false, false),
      (${planId(103)}, 'CREDIT', 'VISA', 3, 3.89, true, false),
      (${planId(200)}, 'DEBIT', 'VISA', 0, 1.49, false, false)`);
  await db.execute(sql`
    INSERT INTO merchant_payment_plans (merchant_id, payment_plan_id)
    SELECT m.id, p.id FROM merchants m CROSS JOIN (VALUES (${planId(101)}::uuid), (${planId(103)}::uuid), (${planId(200)}::uuid)) AS p(id)`);
  // Statistics as a running database would have them.
  await db.execute(sql.raw('ANALYZE'));
}

export async function runFeeRulesBench(options: FeeRulesBenchOptions = {}): Promise<FeeRulesBenchResult> {
  const log = options.log ?? (() => {});
  const { database, drop } = await scratchDatabase(options);
  const services = createServices(testConfig(), database);
  try {
    const caller: Principal = {
      auth: 'token',
      userId: '00000000-0000-4000-8000-000000000000',
      email: 'bench@feegate.test',
      userType: 'CUSTOMER',
      customerId: CUSTOMER,
      merchantId: null,
      sessionId: null,
      apiKeyId: null,
    };
    const planIds = Array.from({ length: PLANS_SENT }, (_, i) => planId(i + 1));
    const figures: FeeRulesBenchFigure[] = [];
    for (const merchants of options.merchantCounts ?? [10_000, 100_000]) {
      await seed(database, merchants);
      const started = performance.now();
      const result = await services.feeRules.assignToAllMerchants(caller, { payment_plan_ids: planIds }, { requestId: 'bench', actor: { type: 'operator', id: null } });
      const seconds = (performance.now() - started) / 1000;
      const figure = {
        merchants,
        plans: PLANS_SENT,
        seconds: Math.round(seconds * 1000) / 1000,
        rowsPerSecond: Math.round((result.added + result.removed) / seconds),
        ...result,
      };
      figures.push(figure);
      log(
        `fee-rules /all ${database.driver}: ${merchants} merchants × ${PLANS_SENT} plans: ${figure.seconds} s, ` +
          `${figure.rowsPerSecond} rows/s (added ${figure.added}, removed ${figure.removed})`,
      );
    }
    return { driver: database.driver, budgetSeconds: FEE_RULES_BUDGET_SECONDS, figures };
  } finally {
    await services.stop();
    await drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runFeeRulesBench({ embedded: process.argv.includes('--embedded'), log: (line) => console.log(line) });
  const largest = result.figures.at(-1);
  if (result.driver === 'postgres' && largest && largest.seconds > FEE_RULES_BUDGET_SECONDS) {
    console.log(`over budget: ${largest.seconds} s > ${FEE_RULES_BUDGET_SECONDS} s`);
    process.exitCode = 1;
  }
}
