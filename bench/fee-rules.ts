/**
 * Benchmark of POST /v1/fee-rules/bulk-assign/all: one customer with 10,000 and
 * then 100,000 merchants, 12 plans sent, existing assignments to replace and to
 * keep. Budget: 100,000 merchants × 12 plans in ≤ 8 s on PostgreSQL, history of
 * the replaced assignments included. Its dry run (?dry_run=true) is timed first
 * on the same data, and must announce exactly what the real call then does.
 * Budget: ≤ 4 s at 100,000 × 12.
 *
 *   node --import tsx bench/fee-rules.ts              # PostgreSQL (BENCH_ADMIN_URL or local postgres)
 *   node --import tsx bench/fee-rules.ts --embedded   # in-memory PGlite
 *   node --import tsx bench/fee-rules.ts --merchants=1000,5000   # other scales (a quick check)
 *   node --import tsx bench/fee-rules.ts --inactive=1            # 1% of the merchants INACTIVE (/all skips them)
 *
 * `runFeeRulesBench` is exported for the main benchmark (bench/run.ts).
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { testConfig } from '../src/config.js';
import { type Database, openDatabase, queryRows, sql } from '../src/db/database.js';
import type { Principal } from '../src/lib/principal.js';
import type { ChangeContext } from '../src/lib/change-context.js';
import { toUuidArray } from '../src/lib/uuid-array.js';
import { createServices } from '../src/services.js';
import { parseOptions, wholeNumber } from './command-line.js';
import { dropPgDatabase, holdReplaceablePlans, recreatePgDatabase } from './seed.js';

export interface FeeRulesBenchOptions {
  /** In-memory PGlite instead of a PostgreSQL server. */
  embedded?: boolean;
  /** Server to create the scratch database on (default postgres://postgres@127.0.0.1:5432/postgres). */
  adminUrl?: string;
  /** Merchant counts, measured in this order (default 10,000 then 100,000). */
  merchantCounts?: number[];
  /** Percent of the merchants made INACTIVE before the call, evenly spread (default 0). */
  inactivePercent?: number;
  log?: (line: string) => void;
}

export interface FeeRulesBenchFigure {
  merchants: number;
  plans: number;
  seconds: number;
  /** The same assignment with ?dry_run=true, on the same data, just before. */
  dryRunSeconds: number;
  /** Rows the real call wrote to merchant_payment_plan_history (the replaced assignments). */
  historyRows: number;
  /** Assignments written (added + removed) per second. */
  rowsPerSecond: number;
  added: number;
  removed: number;
  /**
   * The floor the budget divides by: a bare INSERT ... SELECT of the same merchants × plans
   * into merchant_payment_plans itself, as the call found it.
   */
  tableFloorSeconds: number;
  /** The same INSERT ... SELECT into an empty copy of the table (its key, none of its rows or triggers). */
  emptyFloorSeconds: number;
  /**
   * The same INSERT ... SELECT into a copy that first holds the table's rows as
   * the call found them: each merchant's new keys land between its existing ones
   * (descents and page splits) instead of being appended to an empty index.
   */
  occupiedFloorSeconds: number;
  /** The same change scheduled, from the same starting state: the worker's tick that applies it once due. */
  scheduledSeconds: number;
}

export interface FeeRulesBenchResult {
  driver: 'postgres' | 'pglite';
  budgetSeconds: number;
  dryRunBudgetSeconds: number;
  figures: FeeRulesBenchFigure[];
}

// One per process: two bench runs on one server must not drop each other's database.
const DB_NAME = `feegate_bench_fee_${process.pid}`;
export const CUSTOMER = 'c0000000-0000-4000-8000-00000000bec0';
export const PLANS_SENT = 12;
export const FEE_RULES_BUDGET_SECONDS = 8;
export const DRY_RUN_BUDGET_SECONDS = 4;

/** Fixed plan ids: n < 100 are the plans sent, n ≥ 100 the ones merchants already hold. */
export const planId = (n: number) => `e0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Writes the dirty pages of what was just set up, so that a timed statement never
 * pays for the writes of the one before (a checkpoint started by their WAL). A
 * role without the right to checkpoint measures without it.
 */
export async function settle(database: Database): Promise<void> {
  try {
    await database.db.execute(sql.raw('CHECKPOINT'));
  } catch {
    // Timings are then noisier, not wrong.
  }
}

/** The rows /all adds: the sent plans × every ACTIVE merchant of the customer, in key order, into `table`. */
function floorInsert(table: string, planIds: string[]) {
  return sql`
    INSERT INTO ${sql.identifier(table)} (merchant_id, payment_plan_id, assigned_at)
    SELECT m.id, p.id, statement_timestamp() FROM merchants m
    CROSS JOIN (SELECT unnest(${toUuidArray(planIds)}::uuid[]) AS id) p
    WHERE m.customer_id = ${CUSTOMER} AND m.status = 'ACTIVE'
    ORDER BY m.id, p.id`;
}

export const secondsSince = (started: number) => Math.round(performance.now() - started) / 1000;

/**
 * What writing the rows alone costs: the rows /all adds (`floorInsert`), inserted in
 * key order into a table built like merchant_payment_plans (its primary key and
 * default, none of its triggers), then dropped. `withCurrentRows`: the copy first
 * holds the table's current rows, as the call finds it (docs/performance.md,
 * line 5).
 */
async function copyFloor(database: Database, planIds: string[], withCurrentRows: boolean): Promise<number> {
  const { db } = database;
  await db.execute(sql.raw('CREATE TABLE bench_floor (LIKE merchant_payment_plans INCLUDING ALL)'));
  try {
    if (withCurrentRows) {
      await db.execute(sql.raw('INSERT INTO bench_floor SELECT * FROM merchant_payment_plans ORDER BY 1, 2'));
      await settle(database);
    }
    const started = performance.now();
    await db.execute(floorInsert('bench_floor', planIds));
    return secondsSince(started);
  } finally {
    await db.execute(sql.raw('DROP TABLE bench_floor'));
  }
}

/**
 * The floor the budget names (docs/performance.md, the measurements behind the
 * defaults): the same rows by one bare INSERT ... SELECT into merchant_payment_plans as
 * the call finds it, with its current rows, its primary key and the statement trigger
 * that stands in for its foreign keys, which any insert of these rows pays, and
 * committed as the call is. The caller seeds again after it.
 */
async function tableFloor(database: Database, planIds: string[]): Promise<number> {
  await settle(database);
  const started = performance.now();
  await database.db.execute(floorInsert('merchant_payment_plans', planIds));
  return secondsSince(started);
}

/**
 * The same /all scheduled a few seconds ahead, on freshly seeded data: once due,
 * one tick of the worker applies it (what every instance's worker does).
 */
async function scheduledApply(
  services: ReturnType<typeof createServices>,
  caller: Principal,
  request: { payment_plan_ids: string[] },
  context: ChangeContext,
): Promise<number> {
  const effectiveAt = new Date(Date.now() + 5_200);
  await services.feeRules.assignToAllMerchants(
    caller,
    { ...request, effective_at: effectiveAt.toISOString() },
    context,
  );
  await new Promise((resolve) => setTimeout(resolve, effectiveAt.getTime() - Date.now() + 10));
  const started = performance.now();
  if (!(await services.scheduledChanges.applyDue())) throw new Error('the scheduled /all was not applied');
  return Math.round(performance.now() - started) / 1000;
}

/** A token caller of `customerId`, for benches that call the services directly. */
export function customerCaller(customerId: string): Principal {
  return {
    auth: 'token',
    userId: '00000000-0000-4000-8000-000000000000',
    email: 'bench@feegate.test',
    userType: 'CUSTOMER',
    customerId,
    merchantId: null,
    sessionId: null,
    role: 'ADMIN',
    apiKeyId: null,
  };
}

export async function scratchDatabase(
  options: FeeRulesBenchOptions,
): Promise<{ database: Database; drop(): Promise<void> }> {
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
export async function seed(database: Database, merchantCount: number, inactivePercent: number): Promise<number> {
  const { db } = database;
  await db.execute(
    sql.raw(
      'TRUNCATE audit_events, merchant_payment_plans, merchant_payment_plan_history, payment_plans, merchants, customers CASCADE',
    ),
  );
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
  await holdReplaceablePlans(db, CUSTOMER);
  const inactiveEvery = inactivePercent > 0 ? Math.round(100 / inactivePercent) : 0;
  const [inactive] = await queryRows<{ n: string }>(
    db,
    inactiveEvery === 0
      ? sql`SELECT 0 AS n`
      : sql`WITH off AS (UPDATE merchants SET status = 'INACTIVE' WHERE ('x' || right(id::text, 8))::bit(32)::int % ${inactiveEvery}::int = 0 RETURNING 1)
            SELECT count(*) AS n FROM off`,
  );
  // Statistics as a running database would have them.
  await db.execute(sql.raw('ANALYZE'));
  await settle(database);
  return merchantCount - Number(inactive?.n ?? 0);
}

export async function runFeeRulesBench(options: FeeRulesBenchOptions = {}): Promise<FeeRulesBenchResult> {
  const log = options.log ?? (() => {});
  const { database, drop } = await scratchDatabase(options);
  const services = createServices(testConfig(), database);
  try {
    const caller = customerCaller(CUSTOMER);
    const planIds = Array.from({ length: PLANS_SENT }, (_, i) => planId(i + 1));
    const figures: FeeRulesBenchFigure[] = [];
    const request = { payment_plan_ids: planIds };
    const context = { requestId: 'bench', actor: { type: 'operator' as const, id: null } };
    for (const merchants of options.merchantCounts ?? [10_000, 100_000]) {
      const active = await seed(database, merchants, options.inactivePercent ?? 0);
      const dryStarted = performance.now();
      const dryRun = await services.feeRules.previewForAllMerchants(caller, request);
      const dryRunSeconds = secondsSince(dryStarted);
      const started = performance.now();
      const answer = await services.feeRules.assignToAllMerchants(caller, request, context);
      if (!('applied' in answer)) throw new Error('the bench assigns now, it schedules nothing');
      const result = answer.applied;
      const elapsed = secondsSince(started);
      // A dry run that disagrees with the real call is a failure, not a figure.
      if (
        dryRun.merchants !== active ||
        dryRun.assignments_added !== result.added ||
        dryRun.assignments_removed !== result.removed
      ) {
        throw new Error(
          `dry run ${JSON.stringify({ ...dryRun, changes: dryRun.changes.length })} disagrees with the real call ${JSON.stringify(result)}`,
        );
      }
      const [history] = await queryRows<{ n: string }>(
        database.db,
        sql`SELECT count(*) AS n FROM merchant_payment_plan_history`,
      );
      // The floors start from the state the call started from.
      await seed(database, merchants, options.inactivePercent ?? 0);
      const emptyFloorSeconds = await copyFloor(database, planIds, false);
      const occupiedFloorSeconds = await copyFloor(database, planIds, true);
      const tableFloorSeconds = await tableFloor(database, planIds);
      await seed(database, merchants, options.inactivePercent ?? 0);
      const scheduledSeconds = await scheduledApply(services, caller, request, context);
      const figure = {
        merchants,
        plans: PLANS_SENT,
        seconds: elapsed,
        dryRunSeconds,
        historyRows: Number(history?.n ?? 0),
        rowsPerSecond: Math.round((result.added + result.removed) / elapsed),
        added: result.added,
        removed: result.removed,
        tableFloorSeconds,
        emptyFloorSeconds,
        occupiedFloorSeconds,
        scheduledSeconds,
      };
      figures.push(figure);
      log(
        `fee-rules /all ${database.driver}: ${merchants} merchants × ${PLANS_SENT} plans: ${figure.seconds} s, ` +
          `${figure.rowsPerSecond} rows/s (added ${figure.added}, removed ${figure.removed}, history rows ${figure.historyRows}); ` +
          `dry run ${figure.dryRunSeconds} s; bare INSERT ... SELECT of the same rows into the table ${tableFloorSeconds} s ` +
          `(x${(figure.seconds / tableFloorSeconds).toFixed(2)}), into an empty copy ${emptyFloorSeconds} s ` +
          `(x${(figure.seconds / emptyFloorSeconds).toFixed(2)}), into a copy holding the current rows ${occupiedFloorSeconds} s ` +
          `(x${(figure.seconds / occupiedFloorSeconds).toFixed(2)}); scheduled, applied by the worker ${scheduledSeconds} s`,
      );
    }
    return {
      driver: database.driver,
      budgetSeconds: FEE_RULES_BUDGET_SECONDS,
      dryRunBudgetSeconds: DRY_RUN_BUDGET_SECONDS,
      figures,
    };
  } finally {
    await services.stop();
    await drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const SCRIPT = 'bench/fee-rules.ts';
  const values = parseOptions(SCRIPT, {
    embedded: { type: 'boolean', default: false },
    merchants: { type: 'string' },
    inactive: { type: 'string' },
  });
  const result = await runFeeRulesBench({
    embedded: values.embedded,
    ...(values.inactive === undefined
      ? {}
      : { inactivePercent: wholeNumber(SCRIPT, 'inactive', values.inactive, 0, 99) }),
    ...(values.merchants === undefined
      ? {}
      : { merchantCounts: values.merchants.split(',').map((n) => wholeNumber(SCRIPT, 'merchants', n, 1, 1_000_000)) }),
    log: (line) => console.log(line),
  });
  const largest = result.figures.at(-1);
  if (result.driver === 'postgres' && largest && largest.seconds > FEE_RULES_BUDGET_SECONDS) {
    console.log(`over budget: ${largest.seconds} s > ${FEE_RULES_BUDGET_SECONDS} s`);
    process.exitCode = 1;
  }
  if (result.driver === 'postgres' && largest && largest.dryRunSeconds > DRY_RUN_BUDGET_SECONDS) {
    console.log(`dry run over budget: ${largest.dryRunSeconds} s > ${DRY_RUN_BUDGET_SECONDS} s`);
    process.exitCode = 1;
  }
}
