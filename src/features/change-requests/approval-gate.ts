/**
 * Four-eyes approval in the unit of work (src/db/unit-of-work.ts, ApprovalGate).
 * A fee change asks the gate after its checks: under the customer's REQUIRED
 * policy it is stored as a change request, with its dry run, and not applied.
 * While an approval applies it, the gate locks the request (a second approval
 * waits, then finds it closed), checks that what the change would do is still
 * the preview the approver saw (before it runs, or from what it did when the
 * change tells its dry run from that: no second pass), and once the change ran
 * records it APPLIED with its result and the CHANGE_REQUEST_APPROVED event, all
 * in the one transaction.
 */
import type { ApprovableChange, ApprovalGate, GateScope } from '../../db/unit-of-work.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { type ChangeRequestRow, createChangeRequestsDal } from './change-requests-dal.js';
import { type ChangeRequestResource, previewHash, toChangeRequestResource } from './change-request-resources.js';

/** How long a change request waits for a decision. */
export const CHANGE_REQUEST_TTL_DAYS = 7;

export const closedError = (row: Pick<ChangeRequestRow, 'status'>) =>
  new ConflictError(
    'change_request_closed',
    `This change request is ${row.status}; only a PENDING request can be approved, rejected or cancelled.`,
    { status: row.status },
  );

/** What a held change's request answers: 202 with the change request (and its Location). */
export interface HeldChangeAnswer {
  change_request: ChangeRequestResource;
}

/** The approver's hash must name `current`, what the change would do (or did, in this transaction, rolled back). */
function assertPreview(current: unknown, expected: string): void {
  const hash = previewHash(current);
  if (hash !== expected)
    throw new ConflictError('preview_changed', undefined, { current_preview: current, preview_hash: hash });
}

async function hold(scope: GateScope, change: ApprovableChange): Promise<HeldChangeAnswer | null> {
  const { tx, context } = scope;
  const dal = createChangeRequestsDal(tx);
  const { approval } = context;
  if (approval) {
    const row = await dal.lock(change.customerId, approval.changeRequestId);
    if (!row) throw new NotFoundError('change_request_not_found');
    if (row.status !== 'PENDING') throw closedError(row);
    // A change that tells its dry run from what it did is checked once applied, in settle: one pass over the rows.
    if (approval.previewHash !== undefined && !change.previewOf)
      assertPreview(await change.preview(), approval.previewHash);
    return null;
  }
  if ((await dal.policy(change.customerId)) !== 'REQUIRED') return null;
  const row = await dal.insert({
    customerId: change.customerId,
    operation: change.operation,
    subjectId: change.subjectId ?? null,
    request: change.request,
    preview: await change.preview(),
    requestedBy: context.actor,
    requestId: context.requestId,
    expiresAt: change.expiresAt ?? null,
    ttlDays: CHANGE_REQUEST_TTL_DAYS,
  });
  const resource = toChangeRequestResource(row);
  await scope.audit({
    action: 'change_request.created',
    customerId: change.customerId,
    targetType: 'change_request',
    targetId: row.id,
    details: { operation: row.operation, request: row.request },
  });
  await scope.emit({ type: 'CHANGE_REQUEST_CREATED', customerId: change.customerId, data: resource });
  return { change_request: resource };
}

async function settle(scope: GateScope, change: ApprovableChange, applied: unknown): Promise<ChangeRequestResource> {
  const { tx, context } = scope;
  const { changeRequestId: id, previewHash: expected } = context.approval!;
  if (expected !== undefined && change.previewOf) assertPreview(change.previewOf(applied), expected);
  const result = change.result ? change.result(applied) : applied;
  const row = await createChangeRequestsDal(tx).decide(change.customerId, id, {
    status: 'APPLIED',
    reviewedBy: context.actor,
    result: result ?? null,
  });
  const resource = toChangeRequestResource(row);
  await scope.audit({
    action: 'change_request.approved',
    customerId: change.customerId,
    targetType: 'change_request',
    targetId: id,
    details: { operation: row.operation },
  });
  await scope.emit({ type: 'CHANGE_REQUEST_APPROVED', customerId: change.customerId, data: resource });
  return resource;
}

export const APPROVAL_GATE: ApprovalGate = { hold, settle };
