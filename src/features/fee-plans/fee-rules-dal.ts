/**
 * Queries of plan assignments. The replacement rule is one set-based statement:
 * its cost grows with the rows it changes, never with round trips. Its dry run
 * starts from the same inputs and only reads. History is kept by the database
 * (migration 0006): deleting an assignment records it as a closed interval;
 * fee-rule-history-dal.ts reads it.
 */
import { type SQL, sql } from 'drizzle-orm';
import { type Db, queryRows, sqlState } from '../../db/database.js';
import { CustomerLockedError } from '../../errors.js';
import { toUuidArray } from '../../lib/uuid-array.js';
import { createFeeRuleHistoryQueries } from './fee-rule-history-dal.js';

/** What one run of the replacement rule did, or its dry run would do. */
export interface ReplacementPreview {
  merchants: number;
  merchantsChanged: number;
  added: number;
  removed: number;
  /** The first changed merchants by id, with the plan ids each would gain and lose (sorted). */
  changes: Array<{ merchant_id: string; added: string[]; removed: string[] }>;
}

export type AssignmentTarget = { customerId: string; merchantIds: string[] | 'all' };

/** How many changed merchants a dry run lists. */
export const PREVIEW_CHANGES_LIMIT = 100;

/**
 * work_mem of the replacement's transaction on a PostgreSQL server
 * (docs/performance.md, the measurements behind the defaults). Embedded, the default
 * stays: PGlite's WebAssembly memory never shrinks, and 64 MB raised the
 * service's peak RSS past its budget.
 */
const REPLACEMENT_WORK_MEM = '64MB';

/**
 * The inputs of the replacement rule as CTEs, shared by the change and its dry run:
 * `sent` (the plans sent), `replaced` (other plans of their kinds: what targets
 * lose), `sent_count` and `targets` (the merchants; for `all`, the ACTIVE ones).
 * `replaced` is a handful of plan ids, so statements probe the (merchant_id,
 * payment_plan_id) key instead of joining every current assignment of every
 * target against the catalogue.
 */
function replacementInputs(target: AssignmentTarget, planIds: string[]): SQL {
  const sentIds = toUuidArray(planIds);
  const merchants: SQL =
    target.merchantIds === 'all'
      ? sql`SELECT id FROM merchants WHERE customer_id = ${target.customerId} AND status = 'ACTIVE'`
      : sql`SELECT DISTINCT unnest(${toUuidArray(target.merchantIds)}::uuid[]) AS id`;
  return sql`
    sent AS (
      SELECT id, card_brand, payment_method, is_international, has_installments
      FROM payment_plans WHERE id = ANY(${sentIds}::uuid[])
    ),
    replaced AS (
      SELECT p.id FROM payment_plans p
      WHERE (p.card_brand, p.payment_method, p.is_international, p.has_installments) IN (
          SELECT card_brand, payment_method, is_international, has_installments FROM sent)
        AND p.id <> ALL(${sentIds}::uuid[])
    ),
    sent_count AS MATERIALIZED (SELECT count(*) AS n FROM sent),
    targets AS MATERIALIZED (${merchants})`;
}

/** The counts and changes of a replacement, as the database answers them. */
interface PreviewRow {
  merchants: string;
  merchants_changed: string;
  added: string;
  removed: string;
  changes: ReplacementPreview['changes'] | null;
}

function previewOf(row: PreviewRow | undefined): ReplacementPreview {
  return {
    merchants: Number(row?.merchants ?? 0),
    merchantsChanged: Number(row?.merchants_changed ?? 0),
    added: Number(row?.added ?? 0),
    removed: Number(row?.removed ?? 0),
    changes: row?.changes ?? [],
  };
}

export function createFeeRulesDal(db: Db, driver: 'postgres' | 'pglite') {
  return {
    /**
     * Serialises assignments of these customers until the transaction ends, and
     * counts those that exist. Every assignment touches merchants of exactly one
     * customer, so one lock per customer makes concurrent assignments run one
     * after another; rows are locked in id order, so two transactions locking
     * several customers cannot deadlock. NO KEY UPDATE, not UPDATE: it does not
     * block the foreign-key checks of rows being inserted for these customers
     * (new merchants, users, API keys). NOWAIT: a customer locked by another
     * transaction throws CustomerLockedError at once rather than waiting with a
     * pool connection in hand (db/customer-locks.ts waits without one).
     */
    async tryLockCustomers(customerIds: string[]): Promise<number> {
      try {
        const rows = await queryRows<{ id: string }>(
          db,
          sql`SELECT id FROM customers WHERE id = ANY(${toUuidArray(customerIds)}::uuid[]) ORDER BY id FOR NO KEY UPDATE NOWAIT`,
        );
        return rows.length;
      } catch (err) {
        if (sqlState(err) === '55P03') throw new CustomerLockedError(); // lock_not_available
        throw err;
      }
    },

    /** Whether the customer exists, without a lock (dry runs only read). */
    async customerExists(customerId: string): Promise<boolean> {
      const rows = await queryRows<{ id: string }>(db, sql`SELECT id FROM customers WHERE id = ${customerId}`);
      return rows.length === 1;
    },

    /**
     * For each merchant: drop current plans that share (card_brand, payment_method,
     * is_international, has_installments) with a sent plan, then add the sent plans.
     * Plans sent again are kept as they are rather than deleted and re-added.
     * `merchantIds === 'all'` targets every merchant of `customerId`.
     * Run it after tryLockCustomers in the same transaction. The rows it
     * deletes go to merchant_payment_plan_history (trigger of migration 0006).
     * `effectiveAt` (a scheduled change): the change takes effect then rather than
     * now: what it adds is assigned and what it replaces removed at that instant
     * (the trigger reads feegate.change_at, migration 0012).
     * Answers what changed in the shape of a dry run.
     */
    async replacePlans(target: AssignmentTarget, planIds: string[], effectiveAt?: Date): Promise<ReplacementPreview> {
      const at = effectiveAt ? sql`${effectiveAt.toISOString()}::timestamptz` : sql`statement_timestamp()`;
      const sentIds = toUuidArray(planIds);
      // For this transaction only: the statement's sorts and hashes of a million
      // rows stay in memory (on a server), and JIT compilation (which the planner's cost of so
      // many rows turns on) costs more than it saves (docs/performance.md).
      const settings = [
        sql`set_config('jit', 'off', true)`,
        ...(driver === 'postgres' ? [sql`set_config('work_mem', ${REPLACEMENT_WORK_MEM}, true)`] : []),
        ...(effectiveAt ? [sql`set_config('feegate.change_at', ${effectiveAt.toISOString()}, true)`] : []),
      ];
      await db.execute(sql`SELECT ${sql.join(settings, sql`, `)}`);
      // The insert skips what merchants already hold with an anti-join rather than
      // ON CONFLICT (speculative insertion costs every row; docs/performance.md);
      // callers serialise assignments per customer (tryLockCustomers), so
      // nobody else inserts the same rows meanwhile. Rows go in key order, so the
      // primary key index is written page by page instead of at random: targets
      // in id order, each with the sent plans in id order, which the planner
      // only has to sort within each merchant.
      //
      // Every part of the statement sees the same snapshot, the one from before
      // its writes. So what it adds is exactly targets × sent minus `kept` (the
      // pairs already held), and the counts come from `kept` and the deleted rows
      // rather than from returning and de-duplicating 1.2 million inserted rows.
      // A target changes when it gains a plan (it does not hold every sent plan,
      // `full_targets` are those that do) or loses one.
      //
      // `kept` starts from the pairs targets × sent, whose count the planner
      // knows, never from the current rows filtered by plan: statistics taken
      // before an /all of these plans estimate one such row, and the nested
      // loop that estimate chose ran an /all sent again over 12,000 merchants
      // past the statement timeout (a 503).
      const [row] = await queryRows<PreviewRow>(
        db,
        sql`
        WITH ${replacementInputs(target, planIds)},
        added AS (
          INSERT INTO merchant_payment_plans (merchant_id, payment_plan_id, assigned_at)
          SELECT t.id, s.id, ${at}
          FROM (SELECT id FROM targets ORDER BY id) t CROSS JOIN (SELECT id FROM sent ORDER BY id) s
          WHERE NOT EXISTS (
            SELECT 1 FROM merchant_payment_plans cur
            WHERE cur.merchant_id = t.id AND cur.payment_plan_id = s.id AND cur.payment_plan_id = ANY(${sentIds}::uuid[]))
          ORDER BY t.id, s.id
        ),
        kept AS MATERIALIZED (
          SELECT t.id AS merchant_id, s.id AS payment_plan_id
          FROM targets t CROSS JOIN sent s
          WHERE EXISTS (
            SELECT 1 FROM merchant_payment_plans cur WHERE cur.merchant_id = t.id AND cur.payment_plan_id = s.id)
        ),
        full_targets AS MATERIALIZED (
          SELECT merchant_id FROM kept GROUP BY merchant_id HAVING count(*) = (SELECT n FROM sent_count)
        ),
        removed AS (
          DELETE FROM merchant_payment_plans mpp
          USING (SELECT id FROM targets ORDER BY id) t
          WHERE mpp.merchant_id = t.id
            AND mpp.payment_plan_id IN (SELECT id FROM replaced)
          RETURNING mpp.merchant_id, mpp.payment_plan_id
        ),
        only_losing AS MATERIALIZED (
          SELECT DISTINCT r.merchant_id FROM removed r
          WHERE (SELECT n FROM sent_count) = 0 OR r.merchant_id IN (SELECT merchant_id FROM full_targets)
        ),
        listed AS MATERIALIZED (
          SELECT merchant_id FROM (
            (SELECT t.id AS merchant_id FROM targets t
             WHERE (SELECT n FROM sent_count) > 0 AND t.id NOT IN (SELECT merchant_id FROM full_targets)
             ORDER BY t.id LIMIT ${PREVIEW_CHANGES_LIMIT})
            UNION
            (SELECT merchant_id FROM only_losing ORDER BY merchant_id LIMIT ${PREVIEW_CHANGES_LIMIT})
          ) c ORDER BY merchant_id LIMIT ${PREVIEW_CHANGES_LIMIT}
        ),
        listed_added AS (
          SELECT l.merchant_id, array_agg(s.id ORDER BY s.id) AS added
          FROM listed l CROSS JOIN sent s
          WHERE NOT EXISTS (SELECT 1 FROM kept k WHERE k.merchant_id = l.merchant_id AND k.payment_plan_id = s.id)
          GROUP BY l.merchant_id
        ),
        listed_removed AS (
          SELECT r.merchant_id, array_agg(r.payment_plan_id ORDER BY r.payment_plan_id) AS removed
          FROM removed r WHERE r.merchant_id IN (SELECT merchant_id FROM listed)
          GROUP BY r.merchant_id
        )
        SELECT (SELECT count(*) FROM targets) AS merchants,
               (SELECT CASE WHEN n = 0 THEN 0 ELSE (SELECT count(*) FROM targets) - (SELECT count(*) FROM full_targets) END
                FROM sent_count) + (SELECT count(*) FROM only_losing) AS merchants_changed,
               (SELECT count(*) FROM targets) * (SELECT n FROM sent_count) - (SELECT count(*) FROM kept) AS added,
               (SELECT count(*) FROM removed) AS removed,
               (SELECT json_agg(json_build_object(
                  'merchant_id', l.merchant_id,
                  'added', coalesce(a.added, '{}'),
                  'removed', coalesce(r.removed, '{}')
                ) ORDER BY l.merchant_id)
                FROM listed l
                LEFT JOIN listed_added a ON a.merchant_id = l.merchant_id
                LEFT JOIN listed_removed r ON r.merchant_id = l.merchant_id) AS changes
      `,
      );
      return previewOf(row);
    },

    /**
     * The merchants among `merchantIds` that a change may still assign to when it
     * applies: those of the customer that are ACTIVE. A merchant that is no longer
     * assignable is left out, and the scheduled change reports it as skipped.
     */
    async assignableMerchants(customerId: string, merchantIds: string[]): Promise<string[]> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`SELECT id FROM merchants WHERE customer_id = ${customerId} AND status = 'ACTIVE' AND id = ANY(${toUuidArray(merchantIds)}::uuid[]) ORDER BY id`,
      );
      return rows.map((r) => r.id);
    },

    /**
     * What replacePlans would do, computed without writing. Per target it counts
     * the sent plans already held (kept) and the replaced plans held (removed):
     * it gains the sent plans it does not hold, `sent - kept`, and changes when it
     * gains or loses any. That reads the targets' current assignments once instead
     * of building every (merchant, plan) pair the real statement inserts. Only the
     * first changed merchants get their plan ids, by index probes.
     */
    async previewReplacement(target: AssignmentTarget, planIds: string[]): Promise<ReplacementPreview> {
      const [row] = await queryRows<PreviewRow>(
        db,
        sql`
        WITH ${replacementInputs(target, planIds)},
        held AS MATERIALIZED (
          SELECT t.id AS merchant_id,
                 count(*) FILTER (WHERE mpp.payment_plan_id IN (SELECT id FROM sent)) AS kept,
                 count(*) FILTER (WHERE mpp.payment_plan_id IN (SELECT id FROM replaced)) AS removed
          FROM targets t
          LEFT JOIN merchant_payment_plans mpp ON mpp.merchant_id = t.id
            AND mpp.payment_plan_id IN (SELECT id FROM sent UNION ALL SELECT id FROM replaced)
          GROUP BY t.id
        ),
        changed AS MATERIALIZED (
          SELECT h.merchant_id, sc.n - h.kept AS added, h.removed
          FROM held h CROSS JOIN sent_count sc
          WHERE h.kept < sc.n OR h.removed > 0
        ),
        listed AS (SELECT merchant_id FROM changed ORDER BY merchant_id LIMIT ${PREVIEW_CHANGES_LIMIT})
        SELECT (SELECT count(*) FROM held) AS merchants,
               (SELECT count(*) FROM changed) AS merchants_changed,
               (SELECT coalesce(sum(added), 0) FROM changed) AS added,
               (SELECT coalesce(sum(removed), 0) FROM changed) AS removed,
               (SELECT json_agg(json_build_object(
                  'merchant_id', l.merchant_id,
                  'added', ARRAY(SELECT s.id FROM sent s WHERE NOT EXISTS (
                      SELECT 1 FROM merchant_payment_plans cur WHERE cur.merchant_id = l.merchant_id AND cur.payment_plan_id = s.id)
                    ORDER BY s.id),
                  'removed', ARRAY(SELECT mpp.payment_plan_id FROM merchant_payment_plans mpp
                    WHERE mpp.merchant_id = l.merchant_id AND mpp.payment_plan_id IN (SELECT id FROM replaced)
                    ORDER BY mpp.payment_plan_id)
                ) ORDER BY l.merchant_id) FROM listed l) AS changes
      `,
      );
      return previewOf(row);
    },
    ...createFeeRuleHistoryQueries(db),
  };
}

export type FeeRulesDal = ReturnType<typeof createFeeRulesDal>;
