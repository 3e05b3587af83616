/**
 * Fee changes as a customer's approval policy may hold them (contract section
 * 23): each names its operation and request, so that the unit of work can store
 * it as a change request, and an approval runs it again through the same
 * service call with the approval in its change context.
 */
import type { ApprovableChange } from '../../db/unit-of-work.js';

export type { HeldForApproval as Held } from '../../lib/held-changes.js';

export type FeeChangeOperation =
  | 'fee_rules.bulk_assign'
  | 'fee_rules.bulk_assign_all'
  | 'fee_rules.merchant_assign'
  | 'fee_rules.schedule_cancel'
  | 'payment_plan.create'
  | 'payment_plan.retire';

/** A fee change as it was asked for: what the change request stores. */
export interface AskedChange {
  operation: FeeChangeOperation;
  method: 'POST' | 'DELETE';
  path: string;
  subjectId: string | null;
  body: unknown;
}

/** The change a service asks the unit of work to hold or apply. */
export function approvable(
  customerId: string,
  asked: AskedChange,
  parts: Pick<ApprovableChange, 'preview' | 'expiresAt' | 'result' | 'previewOf'>,
): ApprovableChange {
  return {
    customerId,
    operation: asked.operation,
    subjectId: asked.subjectId,
    request: { method: asked.method, path: asked.path, body: asked.body },
    ...parts,
  };
}
