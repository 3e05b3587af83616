/**
 * Benchmark of approving a held /all (contract section 23, issue 42): under the
 * customer's REQUIRED policy, POST /v1/fee-rules/bulk-assign/all of 100,000
 * merchants × 12 plans is held as a change request, then another ADMIN approves
 * it with the preview_hash it read (as the console does). The approval is timed
 * against the same /all made at once, from the same seeded state, in the same
 * run, rounds ordered A B B A. Budget: ≤ 1.1 × the immediate call (the approval
 * adds no second pass over the rows).
 *
 *   node --import tsx bench/approvals.ts              # PostgreSQL (BENCH_ADMIN_URL or local postgres)
 *   node --import tsx bench/approvals.ts --embedded   # in-memory PGlite
 *   node --import tsx bench/approvals.ts --merchants=10000   # another scale (a quick check)
 *
 * `runApprovalBench` is exported for the main benchmark (bench/run.ts, `--only approval`).
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { testConfig } from '../src/config.js';
import { type Database, sql } from '../src/db/database.js';
import type { ChangeContext } from '../src/lib/change-context.js';
import { createServices } from '../src/services.js';
import { parseOptions, wholeNumber } from './command-line.js';
import { BUDGETS } from './report.js';
import {
  CUSTOMER,
  customerCaller,
  type FeeRulesBenchOptions,
  PLANS_SENT,
  planId,
  scratchDatabase,
  secondsSince,
  seed,
  settle,
} from './fee-rules.js';

export interface ApprovalRun {
  merchants: number;
  plans: number;
  /** Each immediate /all, in the order run (rounds A B B A: immediate, approval, approval, immediate). */
  immediateSeconds: number[];
  /** Each approval of the same /all held as a change request. */
  approvalSeconds: number[];
  /** Their sums' ratio: approvals ÷ immediate calls. */
  ratio: number;
  /** Assignments each run added (the same for every run, or the bench fails). */
  added: number;
}

const REQUESTER = customerCaller(CUSTOMER);
const APPROVER = { ...REQUESTER, userId: '00000000-0000-4000-8000-00000000a001', email: 'checker@feegate.test' };
const contextOf = (userId: string): ChangeContext => ({ requestId: 'bench', actor: { type: 'user', id: userId } });

type Services = ReturnType<typeof createServices>;

/** The /all applied at once: its seconds and the assignments it added. */
async function immediate(services: Services, request: { payment_plan_ids: string[] }) {
  const started = performance.now();
  const answer = await services.feeRules.assignToAllMerchants(REQUESTER, request, contextOf(REQUESTER.userId));
  const seconds = secondsSince(started);
  if (!('applied' in answer)) throw new Error('the immediate /all was not applied');
  return { seconds, added: answer.applied.added };
}

/** The /all held under REQUIRED, read by the approver (its preview_hash), then approved: the approval's seconds. */
async function approved(database: Database, services: Services, request: { payment_plan_ids: string[] }) {
  await database.db.execute(sql`UPDATE customers SET fee_change_approval = 'REQUIRED' WHERE id = ${CUSTOMER}`);
  const held = await services.feeRules.assignToAllMerchants(REQUESTER, request, contextOf(REQUESTER.userId));
  if (!('change_request' in held)) throw new Error('the /all was not held for approval');
  const { preview_hash } = await services.changeRequests.get(APPROVER, held.change_request.id);
  if (!preview_hash) throw new Error('the held /all has no preview_hash');
  await settle(database);
  const started = performance.now();
  const answer = await services.changeRequests.approve(
    APPROVER,
    held.change_request.id,
    { preview_hash },
    contextOf(APPROVER.userId),
  );
  const seconds = secondsSince(started);
  const result = answer.result as { assignments_added?: number } | null;
  if (answer.status !== 'APPLIED') throw new Error(`the approval answered ${answer.status}: ${answer.reason}`);
  return { seconds, added: result?.assignments_added ?? -1 };
}

export async function runApprovalBench(
  options: Pick<FeeRulesBenchOptions, 'embedded' | 'adminUrl' | 'log'> & { merchants?: number } = {},
): Promise<ApprovalRun> {
  const log = options.log ?? (() => {});
  const merchants = options.merchants ?? 100_000;
  const { database, drop } = await scratchDatabase(options);
  const services = createServices(testConfig(), database);
  try {
    const request = { payment_plan_ids: Array.from({ length: PLANS_SENT }, (_, i) => planId(i + 1)) };
    const immediateSeconds: number[] = [];
    const approvalSeconds: number[] = [];
    const added = new Set<number>();
    for (const round of ['immediate', 'approval', 'approval', 'immediate'] as const) {
      // Each run starts from the same state: the merchants holding 3 plans, 2 to replace.
      await seed(database, merchants, 0);
      const run =
        round === 'immediate' ? await immediate(services, request) : await approved(database, services, request);
      (round === 'immediate' ? immediateSeconds : approvalSeconds).push(run.seconds);
      added.add(run.added);
      log(`approval bench ${database.driver}: ${round} /all ${merchants} x ${PLANS_SENT}: ${run.seconds} s`);
    }
    // An approval that applied another change than the immediate call is a failure, not a figure.
    if (added.size !== 1) throw new Error(`the runs added different assignments: ${[...added].join(', ')}`);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    return {
      merchants,
      plans: PLANS_SENT,
      immediateSeconds,
      approvalSeconds,
      ratio: sum(approvalSeconds) / sum(immediateSeconds),
      added: [...added][0]!,
    };
  } finally {
    await services.stop();
    await drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const SCRIPT = 'bench/approvals.ts';
  const values = parseOptions(SCRIPT, {
    embedded: { type: 'boolean', default: false },
    merchants: { type: 'string' },
  });
  const run = await runApprovalBench({
    embedded: values.embedded,
    ...(values.merchants === undefined
      ? {}
      : { merchants: wholeNumber(SCRIPT, 'merchants', values.merchants, 1, 1_000_000) }),
    log: (line) => console.log(line),
  });
  console.log(`approval / immediate: x${run.ratio.toFixed(2)} (budget ${BUDGETS.approvalOverImmediate})`);
  if (run.ratio > BUDGETS.approvalOverImmediate) process.exitCode = 1;
}
