/**
 * Fee-rule changes scheduled for an instant (docs/fee-rules-history.md,
 * "Scheduled changes"): checked when they are scheduled exactly as the
 * immediate call, kept PENDING in the database, and applied at their instant by
 * whichever instance claims them first, in one transaction under the
 * customer's assignment lock, with assignments dated at the instant itself.
 * What is no longer assignable then (a retired plan, a merchant that is not)
 * is skipped and reported in the change's outcome.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { parseInstant } from '../../lib/instant.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import type { Principal } from '../../lib/principal.js';
import { checkAssignment, type FeeRulesDals } from './assignment-checks.js';
import type { AssignmentLimit } from './assignment-limit.js';
import type { CustomerLocks } from '../../db/customer-locks.js';
import type { FeeRuleTimelines } from './fee-rule-timelines.js';
import { type AskedChange, approvable, type Held } from './fee-change-requests.js';
import { dryRun } from './dry-run.js';
import type {
  DueCandidate,
  ScheduledChangeRow,
  ScheduledChangesDal,
  ScheduledStatus,
  ScheduleOutcome,
} from './scheduled-changes-dal.js';

/** How far ahead a change may be scheduled: far enough to be scheduled, not beyond a notice period of a year. */
export const MIN_LEAD_SECONDS = 5;
export const MAX_LEAD_DAYS = 400;
/** The NOTIFY channel that wakes every instance's worker when a change is scheduled. */
export const SCHEDULED_CHANNEL = 'feegate_fee_rules_scheduled';
/** Due changes one tick tries to claim before it gives up until the next. */
const CANDIDATES_PER_TICK = 20;

export interface ScheduledChangeResource {
  id: string;
  effective_at: string;
  kind: 'BULK' | 'ALL';
  merchant_ids: string[] | null;
  payment_plan_ids: string[];
  status: ScheduledStatus;
  create_date: string;
  applied_at: string | null;
  cancelled_at: string | null;
  outcome: ScheduleOutcome | null;
}

export interface ScheduledChangesServiceDeps {
  uow: UnitOfWork<FeeRulesDals>;
  scheduledChangesDal: Pick<ScheduledChangesDal, 'list' | 'dueCandidates'>;
  customerLocks: CustomerLocks<FeeRulesDals>;
  assignmentLimit: AssignmentLimit;
  timelines: FeeRuleTimelines;
}

export function toScheduledResource(row: ScheduledChangeRow): ScheduledChangeResource {
  return {
    id: row.id,
    effective_at: row.effectiveAt.toISOString(),
    kind: row.kind,
    merchant_ids: row.merchantIds,
    payment_plan_ids: row.paymentPlanIds,
    status: row.status,
    create_date: row.createdAt.toISOString(),
    applied_at: row.appliedAt?.toISOString() ?? null,
    cancelled_at: row.cancelledAt?.toISOString() ?? null,
    outcome: row.outcome,
  };
}

/** `effective_at` as sent: an instant at least MIN_LEAD_SECONDS and at most MAX_LEAD_DAYS ahead, else a 400. */
export function parseEffectiveAt(text: string, now = Date.now()): Date {
  const detail = 'The request is not valid.';
  const at = parseInstant('effective_at', text, detail);
  const refuse = (message: string) => new ValidationError([{ field: 'effective_at', message }], detail);
  if (at.getTime() < now + MIN_LEAD_SECONDS * 1000)
    throw refuse(`must be at least ${MIN_LEAD_SECONDS} seconds in the future`);
  if (at.getTime() > now + MAX_LEAD_DAYS * 86_400_000)
    throw refuse(`must be at most ${MAX_LEAD_DAYS} days in the future`);
  return at;
}

export function createScheduledChangesService(deps: ScheduledChangesServiceDeps) {
  const { uow, scheduledChangesDal, customerLocks, assignmentLimit, timelines } = deps;

  /**
   * Applies change `id` if this instance can claim it: the customer's lock,
   * then the row (SKIP LOCKED), then the replacement rule with what is still
   * assignable, its outcome, audit record and event, all in one transaction.
   */
  async function applyOne(candidate: DueCandidate): Promise<boolean> {
    const context = { actor: candidate.actor, requestId: candidate.requestId };
    return customerLocks.forCustomer(candidate.customerId, context, async ({ dal, audit, emit, afterCommit }) => {
      const change = await dal.scheduledChanges.claim(candidate.id);
      if (!change) return false;
      afterCommit(timelines.changed);
      const { customerId } = change;
      const plans = await dal.paymentPlans.findInCatalogue(customerId, change.paymentPlanIds);
      const assignablePlans = new Set(plans.filter((p) => p.status === 'ACTIVE').map((p) => p.id));
      const planIds = change.paymentPlanIds.filter((id) => assignablePlans.has(id));
      const merchantIds =
        change.merchantIds === null ? 'all' : await dal.feeRules.assignableMerchants(customerId, change.merchantIds);
      const skippedMerchants =
        merchantIds === 'all' ? [] : (change.merchantIds ?? []).filter((id) => !merchantIds.includes(id));
      const nothing = planIds.length === 0 || (merchantIds !== 'all' && merchantIds.length === 0);
      const effect = nothing
        ? { merchants: 0, merchantsChanged: 0, added: 0, removed: 0, changes: [] }
        : await dal.feeRules.replacePlans({ customerId, merchantIds }, planIds, change.effectiveAt);
      const outcome: ScheduleOutcome = {
        merchants: effect.merchants,
        merchants_changed: effect.merchantsChanged,
        assignments_added: effect.added,
        assignments_removed: effect.removed,
        skipped_payment_plan_ids: change.paymentPlanIds.filter((id) => !assignablePlans.has(id)),
        skipped_merchant_ids: skippedMerchants,
      };
      const applied = toScheduledResource(await dal.scheduledChanges.markApplied(change.id, outcome));
      await audit({
        action: 'fee_rules.schedule_applied',
        customerId,
        targetType: 'scheduled_change',
        targetId: change.id,
        details: { effective_at: applied.effective_at, kind: applied.kind, ...outcome },
      });
      await emit({ type: 'FEE_RULES_SCHEDULE_APPLIED', customerId, data: { ...applied, changes: effect.changes } });
      return true;
    });
  }

  return {
    /**
     * Schedules an assignment (`merchantIds` named, or 'all') for `effectiveAt`,
     * after the checks of the immediate call. Counted as an assignment request.
     */
    async schedule(
      customerId: string,
      merchantIds: string[] | 'all',
      planIds: string[],
      effectiveAt: Date,
      context: ChangeContext,
      asked: AskedChange,
    ): Promise<{ scheduled_change: ScheduledChangeResource } | Held> {
      await assignmentLimit.take(customerId);
      return uow.write(context, async ({ dal, audit, emit, notify, answer, holdForApproval }) => {
        await checkAssignment(customerId, await dal.feeRules.customerExists(customerId), merchantIds, planIds, dal);
        // Held, it is the present state a dry run with effective_at previews; pending at its instant, it expires.
        const held = await holdForApproval(
          approvable(customerId, asked, {
            preview: async () => dryRun(await dal.feeRules.previewReplacement({ customerId, merchantIds }, planIds)),
            expiresAt: effectiveAt,
            result: (scheduled) => scheduled,
          }),
        );
        if (held) return held;
        const inserted = await dal.scheduledChanges.insert({
          customerId,
          merchantIds: merchantIds === 'all' ? null : merchantIds,
          paymentPlanIds: planIds,
          effectiveAt,
          actor: context.actor,
          requestId: context.requestId,
        });
        const resource = toScheduledResource(inserted);
        await audit({
          action: 'fee_rules.scheduled',
          customerId,
          targetType: 'scheduled_change',
          targetId: inserted.id,
          details: {
            effective_at: resource.effective_at,
            kind: resource.kind,
            merchant_count: merchantIds === 'all' ? 'all' : merchantIds.length,
            payment_plan_ids: planIds,
          },
        });
        await emit({ type: 'FEE_RULES_SCHEDULED', customerId, data: { ...resource } });
        await notify({ channel: SCHEDULED_CHANNEL, payload: inserted.id });
        answer({ scheduled_change: resource });
        return { scheduled_change: resource };
      });
    },

    /** GET /v1/fee-rules/scheduled-changes: the customer's changes, newest first. */
    async list(
      principal: Principal,
      request: PageRequest & { status?: ScheduledStatus | undefined },
    ): Promise<Page<ScheduledChangeResource>> {
      const { rows, total } = await scheduledChangesDal.list(principal.customerId, request.status, request);
      return toPage(rows.map(toScheduledResource), total, request);
    },

    /** DELETE /v1/fee-rules/scheduled-changes/{id}: a PENDING change is cancelled; again is a no-op; an applied one 409. */
    async cancel(principal: Principal, id: string, context: ChangeContext): Promise<Held | undefined> {
      const { customerId } = principal;
      return uow.write(context, async ({ dal, audit, holdForApproval }) => {
        // The row lock waits for an instance applying it: then the answer is that it was applied.
        const change = await dal.scheduledChanges.lockOfCustomer(customerId, id.toLowerCase());
        if (!change) throw new NotFoundError('scheduled_change_not_found');
        if (change.status === 'APPLIED')
          throw new ConflictError(
            'scheduled_change_not_pending',
            `This change was applied at ${change.appliedAt?.toISOString()}; only a PENDING change can be cancelled.`,
            { status: change.status },
          );
        const path = `/v1/fee-rules/scheduled-changes/${change.id}`;
        const asked = { operation: 'fee_rules.schedule_cancel', method: 'DELETE', path, subjectId: change.id } as const;
        // Held, it must be decided before the change applies: then it can no longer be cancelled.
        const held = await holdForApproval(
          approvable(
            customerId,
            { ...asked, body: null },
            {
              preview: async () => ({ scheduled_change: toScheduledResource(change) }),
              expiresAt: change.effectiveAt,
            },
          ),
        );
        if (held) return held;
        if (change.status === 'CANCELLED') return;
        await dal.scheduledChanges.markCancelled(change.id);
        await audit({
          action: 'fee_rules.schedule_cancelled',
          customerId,
          targetType: 'scheduled_change',
          targetId: change.id,
          details: { effective_at: change.effectiveAt.toISOString(), kind: change.kind },
        });
      });
    },

    /**
     * One tick of the background worker: applies the first due change this
     * instance can claim. True when it applied one (the worker ticks again at once).
     */
    async applyDue(): Promise<boolean> {
      for (const candidate of await scheduledChangesDal.dueCandidates(CANDIDATES_PER_TICK)) {
        if (await applyOne(candidate)) return true;
      }
      return false;
    },
  };
}

export type ScheduledChangesService = ReturnType<typeof createScheduledChangesService>;
