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
import type { FeeRulesService } from './fee-rules-service.js';

/** A held change as its change request keeps it. */
export interface StoredFeeChange {
  operation: string;
  subjectId: string | null;
  body: unknown;
}

type AssignBody = Parameters<FeeRulesService['assignToMerchants']>[1];

export function createHeldFeeChanges(deps: { feeRules: FeeRulesService }) {
  const { feeRules } = deps;

  /** The operation of a stored change; one this version does not know is refused, never guessed at. */
  function operationOf(change: StoredFeeChange): FeeChangeOperation {
    const known: FeeChangeOperation[] = [
      'fee_rules.bulk_assign',
      'fee_rules.bulk_assign_all',
      'fee_rules.merchant_assign',
    ];
    if (!known.includes(change.operation as FeeChangeOperation))
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
        default:
          return feeRules.assignToMerchant(principal, change.subjectId ?? '', body, context);
      }
    },

    async preview(change: StoredFeeChange, principal: Principal): Promise<unknown> {
      const body = change.body as AssignBody;
      switch (operationOf(change)) {
        case 'fee_rules.bulk_assign':
          return feeRules.previewForMerchants(principal, body);
        case 'fee_rules.bulk_assign_all':
          return feeRules.previewForAllMerchants(principal, body);
        default:
          return feeRules.previewForMerchant(principal, change.subjectId ?? '', body);
      }
    },
  };
}
