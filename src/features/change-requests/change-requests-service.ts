/**
 * Change requests (contract section 23): the listing and the record with what
 * the change would do now, and their decisions. An approval runs the held
 * change again through the same service call an immediate change makes, with
 * the approval in its change context: the unit of work's gate then lets it
 * apply and records the request APPLIED in that same transaction
 * (approval-gate.ts). A change that can no longer apply (a plan retired, every
 * merchant inactive) leaves the request FAILED with the reason.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { AppError, ForbiddenError, NotFoundError } from '../../errors.js';
import { type Actor, actorOf, type ChangeContext, SYSTEM_CONTEXT } from '../../lib/change-context.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import type { Principal } from '../../lib/principal.js';
import { closedError } from './approval-gate.js';
import type { ChangeRequestRow, ChangeRequestStatus, ChangeRequestsDal, Decision } from './change-requests-dal.js';
import { type ChangeRequestResource, previewHash, toChangeRequestResource } from './change-request-resources.js';

/** Pending requests one tick of the expiry sweep expires at most. */
const EXPIRED_PER_TICK = 100;

/** A held change as its operation's service takes it again. */
export interface HeldChange {
  operation: string;
  subjectId: string | null;
  body: unknown;
  preview: unknown;
}

/** How the held changes run: through their own services (given by the composition). */
export interface HeldChanges {
  /** Applies the change now as `principal`; the context carries the approval. */
  apply(change: HeldChange, principal: Principal, context: ChangeContext): Promise<unknown>;
  /** Its dry run now, as `principal` would see it. */
  preview(change: HeldChange, principal: Principal): Promise<unknown>;
}

export type ChangeRequestDetail = ChangeRequestResource & { current_preview: unknown; preview_hash: string | null };

export interface ChangeRequestsServiceDeps {
  uow: UnitOfWork<{ changeRequests: ChangeRequestsDal }>;
  changeRequestsDal: Pick<ChangeRequestsDal, 'find' | 'list' | 'answerableUsers'>;
  heldChanges: HeldChanges;
}

/** The codes of the approval itself: they say nothing about whether the change can still apply. */
const APPROVAL_CODES = new Set(['change_request_closed', 'change_request_not_found', 'preview_changed']);

/** An answer of the held change's own checks that no later retry can turn: the change can no longer apply. */
function cannotApply(err: unknown): err is AppError {
  return err instanceof AppError && [400, 404, 409, 422].includes(err.status) && !APPROVAL_CODES.has(err.code);
}

const sameActor = (a: Pick<Actor, 'type' | 'id'>, b: Actor) => a.type === b.type && a.id === b.id;

/** Approving and rejecting are an ADMIN's, by access token: a person answers for it. */
function assertReviewer(principal: Principal): void {
  if (principal.auth !== 'token' || principal.role !== 'ADMIN' || principal.merchantId !== null)
    throw new ForbiddenError(
      'insufficient_role',
      "Only the access token of an ADMIN approves or rejects a change request; MEMBER, VIEWER and API keys don't.",
    );
}

/**
 * Refuses a reviewer who answers for the request: the user who asked, or for a
 * key, a user it belongs to or who made or rolled it (else an ADMIN could ask
 * through a key of their own making and approve with their token: one person,
 * both eyes; change-requests-dal.ts, answerableUsers).
 */
async function assertNotRequester(
  row: ChangeRequestRow,
  principal: Principal,
  dal: Pick<ChangeRequestsDal, 'answerableUsers'>,
): Promise<void> {
  if ((await dal.answerableUsers(row.requestedBy)).includes(principal.userId))
    throw new ForbiddenError('self_approval');
}

const heldOf = (row: ChangeRequestRow): HeldChange => ({
  operation: row.operation,
  subjectId: row.subjectId,
  body: row.request.body,
  preview: row.preview,
});

export function createChangeRequestsService(deps: ChangeRequestsServiceDeps) {
  const { uow, changeRequestsDal, heldChanges } = deps;

  async function found(customerId: string, id: string): Promise<ChangeRequestRow> {
    const row = await changeRequestsDal.find(customerId, id.toLowerCase());
    if (!row) throw new NotFoundError('change_request_not_found');
    return row;
  }

  /** Decides a request that is still PENDING, in a unit of work that locks it first. */
  function decide(
    principal: Principal,
    id: string,
    context: ChangeContext,
    decision: (row: ChangeRequestRow, dal: ChangeRequestsDal) => Decision | Promise<Decision>,
    action: string,
  ): Promise<ChangeRequestRow> {
    const { customerId } = principal;
    return uow.write(context, async ({ dal, audit, emit, answer }) => {
      const row = await dal.changeRequests.lock(customerId, id.toLowerCase());
      if (!row) throw new NotFoundError('change_request_not_found');
      const chosen = await decision(row, dal.changeRequests);
      if (row.status !== 'PENDING') throw closedError(row);
      const decided = await dal.changeRequests.decide(customerId, row.id, chosen);
      await audit({
        action,
        customerId,
        targetType: 'change_request',
        targetId: row.id,
        details: { operation: row.operation, ...(chosen.reason ? { reason: chosen.reason } : {}) },
      });
      if (chosen.status === 'REJECTED')
        await emit({ type: 'CHANGE_REQUEST_REJECTED', customerId, data: toChangeRequestResource(decided) });
      // The caller is told the change request, not its row: an Idempotency-Key stores that with the decision.
      answer(toChangeRequestResource(decided));
      return decided;
    });
  }

  return {
    /** GET /v1/change-requests: newest first, all or of one status. */
    async list(
      principal: Principal,
      request: PageRequest & { status?: ChangeRequestStatus | undefined },
    ): Promise<Page<ChangeRequestResource>> {
      const { rows, total } = await changeRequestsDal.list(principal.customerId, request.status, request);
      return toPage(rows.map(toChangeRequestResource), total, request);
    },

    /** GET /v1/change-requests/{id}: with a PENDING request's dry run now and its hash. */
    async get(principal: Principal, id: string): Promise<ChangeRequestDetail> {
      const row = await found(principal.customerId, id);
      if (row.status !== 'PENDING')
        return { ...toChangeRequestResource(row), current_preview: null, preview_hash: null };
      let current: unknown;
      try {
        current = await heldChanges.preview(heldOf(row), principal);
      } catch (err) {
        if (!cannotApply(err)) throw err;
        // What an approval would meet now: the change would fail, and this says why.
        current = { problem: { code: err.code, detail: err.detail } };
      }
      return { ...toChangeRequestResource(row), current_preview: current, preview_hash: previewHash(current) };
    },

    /**
     * POST /v1/change-requests/{id}/approve: applied now through its own
     * service, as the approver, or FAILED with the reason its checks give.
     */
    async approve(
      principal: Principal,
      id: string,
      body: { preview_hash?: string | undefined },
      context: ChangeContext,
    ): Promise<ChangeRequestResource> {
      assertReviewer(principal);
      const row = await found(principal.customerId, id);
      await assertNotRequester(row, principal, changeRequestsDal);
      if (row.status !== 'PENDING') throw closedError(row);
      const requestedBy = { type: row.requestedBy.type, id: row.requestedBy.id };
      try {
        await heldChanges.apply(heldOf(row), principal, {
          ...context,
          approval: { changeRequestId: row.id, requestedBy, previewHash: body.preview_hash },
        });
      } catch (err) {
        if (!cannotApply(err)) throw err;
        const failed = await decide(
          principal,
          row.id,
          context,
          () => ({ status: 'FAILED', reviewedBy: actorOf(principal), reason: err.detail }),
          'change_request.failed',
        );
        return toChangeRequestResource(failed);
      }
      return toChangeRequestResource(await found(principal.customerId, row.id));
    },

    /** POST /v1/change-requests/{id}/reject: another ADMIN, with the reason. */
    async reject(
      principal: Principal,
      id: string,
      body: { reason: string },
      context: ChangeContext,
    ): Promise<ChangeRequestResource> {
      assertReviewer(principal);
      const decision = async (row: ChangeRequestRow, dal: ChangeRequestsDal): Promise<Decision> => {
        await assertNotRequester(row, principal, dal);
        return { status: 'REJECTED', reviewedBy: actorOf(principal), reason: body.reason };
      };
      return toChangeRequestResource(await decide(principal, id, context, decision, 'change_request.rejected'));
    },

    /** POST /v1/change-requests/{id}/cancel: only its requester. */
    async cancel(principal: Principal, id: string, context: ChangeContext): Promise<ChangeRequestResource> {
      const decision = (row: ChangeRequestRow): Decision => {
        if (!sameActor(row.requestedBy, actorOf(principal))) throw new ForbiddenError('not_requester');
        return { status: 'CANCELLED' };
      };
      return toChangeRequestResource(await decide(principal, id, context, decision, 'change_request.cancelled'));
    },

    /** One tick of the expiry sweep: true when it expired a full batch (it ticks again at once). */
    async expireDue(): Promise<boolean> {
      const expired = await uow.write(SYSTEM_CONTEXT, async ({ dal, audit }) => {
        const rows = await dal.changeRequests.expireDue(EXPIRED_PER_TICK);
        for (const row of rows)
          await audit({
            action: 'change_request.expired',
            customerId: row.customerId,
            targetType: 'change_request',
            targetId: row.id,
            details: { operation: row.operation },
          });
        return rows.length;
      });
      return expired === EXPIRED_PER_TICK;
    },
  };
}

export type ChangeRequestsService = ReturnType<typeof createChangeRequestsService>;
