/**
 * What fee-rule history costs on disk (docs/operations.md): one customer's
 * merchants all hold an installment table of `--plans` plans, and `/all`
 * replaces it `--rounds` times, alternating two tables of the same kinds and
 * terms (the flood of issue #20). Every round ends `merchants × plans`
 * assignments (one history row each) and adds as many. Printed: bytes of
 * history (table and index) per ended assignment, WAL bytes per changed
 * assignment (added + removed), and what the present table and the audit trail
 * grow by. PostgreSQL only: sizes on the embedded database say nothing about a
 * server's disk.
 *
 *   node --import tsx bench/history-cost.ts                                   # 20,000 merchants × 12 plans × 4 rounds
 *   node --import tsx bench/history-cost.ts --merchants=2000 --plans=1 --rounds=10
 */
import { testConfig } from '../src/config.js';
import { openDatabase, queryRows, sql } from '../src/db/database.js';
import { OPERATOR_CONTEXT } from '../src/lib/change-context.js';
import { createServices } from '../src/services.js';
import { parseOptions, wholeNumber } from './command-line.js';
import { customerCaller } from './fee-rules.js';
import { dropPgDatabase, recreatePgDatabase } from './seed.js';

const SCRIPT = 'bench/history-cost.ts';
const values = parseOptions(SCRIPT, {
  merchants: { type: 'string', default: '20000' },
  plans: { type: 'string', default: '12' },
  rounds: { type: 'string', default: '4' },
});
const merchants = wholeNumber(SCRIPT, 'merchants', values.merchants, 1, 1_000_000);
const plans = wholeNumber(SCRIPT, 'plans', values.plans, 1, 100);
const rounds = wholeNumber(SCRIPT, 'rounds', values.rounds, 1, 100);

const DB_NAME = `feegate_bench_history_${process.pid}`;
const CUSTOMER = 'c0000000-0000-4000-8000-00000000b1c0';
/** Plan `n` of table `t` (0 or 1): same kind and term in both tables, another commission. */
const planId = (t: number, n: number) => `e0000000-0000-4000-8000-${String(t * 1000 + n).padStart(12, '0')}`;

const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
await recreatePgDatabase(adminUrl, DB_NAME);
const url = new URL(adminUrl);
url.pathname = `/${DB_NAME}`;
const database = await openDatabase({ databaseUrl: url.toString() });
const services = createServices(testConfig({ assignmentsPerCustomerPerMinute: 0 }), database);
const { db } = database;

interface Sizes {
  history: number;
  historyRows: number;
  present: number;
  audit: number;
  wal: string;
}
async function sizes(): Promise<Sizes> {
  const [row] = await queryRows<{ history: string; history_rows: string; present: string; audit: string; wal: string }>(
    db,
    sql`
    SELECT pg_total_relation_size('merchant_payment_plan_history') AS history,
           (SELECT count(*) FROM merchant_payment_plan_history) AS history_rows,
           pg_total_relation_size('merchant_payment_plans') AS present,
           pg_total_relation_size('audit_events') AS audit,
           pg_current_wal_lsn()::text AS wal`,
  );
  return {
    history: Number(row!.history),
    historyRows: Number(row!.history_rows),
    present: Number(row!.present),
    audit: Number(row!.audit),
    wal: row!.wal,
  };
}

try {
  await database.migrate();
  await db.execute(sql`INSERT INTO customers (id, name) VALUES (${CUSTOMER}, 'History cost')`);
  await db.execute(sql`
    INSERT INTO merchants (id, customer_id, name)
    SELECT gen_random_uuid(), ${CUSTOMER}, 'Merchant ' || n FROM generate_series(1, ${merchants}::int) AS n`);
  for (const t of [0, 1]) {
    await db.execute(sql`
      INSERT INTO payment_plans (id, payment_method, card_brand, term, commission, has_installments, is_international)
      SELECT ('e0000000-0000-4000-8000-' || lpad((${t * 1000}::int + n)::text, 12, '0'))::uuid, 'CREDIT', 'VISA', n,
             2.49 + 0.4 * n + 0.1 * ${t}::int, n > 1, false
      FROM generate_series(1, ${plans}::int) AS n`);
  }
  await db.execute(sql`
    INSERT INTO merchant_payment_plans (merchant_id, payment_plan_id)
    SELECT m.id, ('e0000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid FROM merchants m CROSS JOIN generate_series(1, ${plans}::int) AS n`);
  await db.execute(sql.raw('VACUUM ANALYZE'));

  const caller = customerCaller(CUSTOMER);
  const before = await sizes();
  let changed = 0;
  for (let round = 1; round <= rounds; round++) {
    const table = round % 2;
    const answer = await services.feeRules.assignToAllMerchants(
      caller,
      { payment_plan_ids: Array.from({ length: plans }, (_, i) => planId(table, i + 1)) },
      OPERATOR_CONTEXT,
    );
    if ('applied' in answer) changed += answer.applied.added + answer.applied.removed;
  }
  const after = await sizes();
  await db.execute(sql.raw('VACUUM merchant_payment_plans'));
  const vacuumed = await sizes();
  const [wal] = await queryRows<{ bytes: string }>(
    db,
    sql`SELECT pg_wal_lsn_diff(${after.wal}::pg_lsn, ${before.wal}::pg_lsn) AS bytes`,
  );
  const ended = after.historyRows - before.historyRows;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `${merchants} merchants × ${plans} plans, ${rounds} rounds of /all: ${ended} assignments ended, ${changed} changed (added + removed)`,
  );
  console.log(
    `history: ${mb(after.history - before.history)}, ${Math.round((after.history - before.history) / ended)} bytes per ended assignment (table and index)`,
  );
  console.log(
    `WAL: ${mb(Number(wal!.bytes))}, ${Math.round(Number(wal!.bytes) / changed)} bytes per changed assignment`,
  );
  console.log(
    `present: ${mb(before.present)} before, ${mb(after.present)} after, ${mb(vacuumed.present)} after VACUUM`,
  );
  console.log(`audit trail: ${after.audit - before.audit} bytes for ${rounds} requests`);
} finally {
  await services.stop();
  await database.close();
  await dropPgDatabase(adminUrl, DB_NAME);
}
