/**
 * Held fee changes run again through the very service calls that made them
 * (contract section 23): an approval applies one as its own route would have,
 * with the approval in the change context; its current preview is that call's
 * dry run now. The change requests get this through the composition root.
 */
import { ValidationError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import type { Principal } from '../../lib/principal.js';
import type { FeeChangeOperation } from './fee-change-requests.js';
import type { FeeRuleCatalogueService, NewFeeRuleRequest } from './fee-rule-catalogue-service.js';
import type { FeeRulesService } from './fee-rules-service.js';
import type { ScheduledChangesService } from './scheduled-changes-service.js';

/** A held change as its change request keeps it. */
export interface StoredFeeChange {
  operation: string;
  subjectId: string | null;
  body: unknown;
  /** What it was when asked for: creating, retiring and cancelling have no dry run, and do not move. */
  preview: unknown;
}

const OPERATIONS: FeeChangeOperation[] = [
  'fee_rules.bulk_assign',
  'fee_rules.bulk_assign_all',
  'fee_rules.merchant_assign',
  'fee_rules.schedule_cancel',
  'payment_plan.create',
  'payment_plan.retire',
];

type AssignBody = Parameters<FeeRulesService['assignToMerchants']>[1];

export function createHeldFeeChanges(deps: {
  feeRules: FeeRulesService;
  feeRuleCatalogue: FeeRuleCatalogueService;
  scheduledChanges: ScheduledChangesService;
}) {
  const { feeRules, feeRuleCatalogue, scheduledChanges } = deps;

  /** The operation of a stored change; one this version does not know is refused, never guessed at. */
  function operationOf(change: StoredFeeChange): FeeChangeOperation {
    if (!OPERATIONS.includes(change.operation as FeeChangeOperation))
      throw new ValidationError([{ field: 'operation', message: `${change.operation} is not a held fee change` }]);
    return change.operation as FeeChangeOperation;
  }

  return {
    async apply(change: StoredFeeChange, principal: Principal, context: ChangeContext): Promise<unknown> {
      const body = change.body as AssignBody;
      switch (operationOf(change)) {
        case 'fee_rules.bulk_assign':
          return feeRules.assignToMerchants(principal, body, context);
        case 'fee_rules.bulk_assign_all':
          return feeRules.assignToAllMerchants(principal, body, context);
        case 'fee_rules.merchant_assign':
          return feeRules.assignToMerchant(principal, change.subjectId ?? '', body, context);
        case 'fee_rules.schedule_cancel':
          return scheduledChanges.cancel(principal, change.subjectId ?? '', context);
        case 'payment_plan.create':
          return feeRuleCatalogue.create(principal, change.body as NewFeeRuleRequest, context);
        case 'payment_plan.retire':
          return feeRuleCatalogue.retire(principal, change.subjectId ?? '', context);
      }
    },

    async preview(change: StoredFeeChange, principal: Principal): Promise<unknown> {
      const body = change.body as AssignBody;
      switch (operationOf(change)) {
        case 'fee_rules.bulk_assign':
          return feeRules.previewForMerchants(principal, body);
        case 'fee_rules.bulk_assign_all':
          return feeRules.previewForAllMerchants(principal, body);
        case 'fee_rules.merchant_assign':
          return feeRules.previewForMerchant(principal, change.subjectId ?? '', body);
        default:
          return change.preview;
      }
    },
  };
}
