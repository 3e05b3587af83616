/** A dry run's answer: what an assignment would change, also what a held change request previews. */
import type { ReplacementPreview } from './fee-rules-dal.js';

/** POST ...?dry_run=true: what the assignment would change. */
export interface DryRunResource {
  dry_run: true;
  merchants: number;
  merchants_changed: number;
  assignments_added: number;
  assignments_removed: number;
  changes: Array<{ merchant_id: string; added: string[]; removed: string[] }>;
}

/** What changed, in the shape of a dry run's answer (dry_run aside): the FEE_RULES_ASSIGNED event's data. */
export function effectOf(effect: ReplacementPreview): Omit<DryRunResource, 'dry_run'> {
  return {
    merchants: effect.merchants,
    merchants_changed: effect.merchantsChanged,
    assignments_added: effect.added,
    assignments_removed: effect.removed,
    changes: effect.changes,
  };
}

/** The dry run's answer: what a held change request stores as its preview too. */
export const dryRun = (effect: ReplacementPreview): DryRunResource => ({ dry_run: true, ...effectOf(effect) });
