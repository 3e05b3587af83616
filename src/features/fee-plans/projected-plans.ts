/**
 * A merchant's plans at a future instant: the plans it holds now, with the
 * pending scheduled changes that reach it applied in order by the replacement
 * rule, as the worker will apply them (retired plans skipped), each added plan
 * assigned at its change's instant. Small sets (a merchant's plans), so in memory.
 */
import type { PlanRow, PlanStatus } from './payment-plans-dal.js';
import type { HeldPlanRow } from './fee-rule-history-dal.js';
import type { ScheduledChangeRow } from './scheduled-changes-dal.js';

type Plan = Omit<PlanRow, 'isSelected'> & { status: PlanStatus };

const kindOf = (p: Omit<PlanRow, 'isSelected'>) =>
  JSON.stringify([p.cardBrand, p.paymentMethod, p.isInternational, p.hasInstallments]);

/** The order of GET /v1/merchants/{id}/fee-rules: card_brand, payment_method, is_international, has_installments, term, id. */
function byListingOrder(a: HeldPlanRow, b: HeldPlanRow): number {
  const keys = (p: HeldPlanRow) => [p.cardBrand, p.paymentMethod, Number(p.isInternational), Number(p.hasInstallments)];
  const [ka, kb] = [keys(a), keys(b)];
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return ka[i]! < kb[i]! ? -1 : 1;
  }
  if (a.term !== b.term) return a.term - b.term;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function projectPendingChanges(
  held: HeldPlanRow[],
  pending: ScheduledChangeRow[],
  plans: Plan[],
): HeldPlanRow[] {
  const byId = new Map(plans.map((p) => [p.id, p]));
  let current = held;
  for (const change of pending) {
    const sent = change.paymentPlanIds.map((id) => byId.get(id)).filter((p): p is Plan => p?.status === 'ACTIVE');
    if (sent.length === 0) continue;
    const sentIds = new Set(sent.map((p) => p.id));
    const sentKinds = new Set(sent.map(kindOf));
    const kept = current.filter((p) => sentIds.has(p.id) || !sentKinds.has(kindOf(p)));
    const keptIds = new Set(kept.map((p) => p.id));
    const assignedAt = change.effectiveAt.toISOString();
    const added = sent.filter((p) => !keptIds.has(p.id)).map(({ status: _status, ...p }) => ({ ...p, assignedAt }));
    current = [...kept, ...added];
  }
  return [...current].sort(byListingOrder);
}
