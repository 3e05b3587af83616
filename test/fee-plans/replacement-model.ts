/** The seed's replacement rule as a few lines of plain code: what the SQL must agree with. */

export interface ModelPlan {
  id: string;
  card_brand: string;
  payment_method: string;
  is_international: boolean;
  has_installments: boolean;
  term: number;
}

/** Merchant id → the plan ids it holds. */
export type Assignments = Map<string, Set<string>>;

const kindOf = (p: ModelPlan) => [p.card_brand, p.payment_method, p.is_international, p.has_installments].join('|');

/** Two distinct plans of the same kind and term: the request must be refused. */
export function hasConflict(plans: ModelPlan[]): boolean {
  const seen = new Set<string>();
  for (const p of new Map(plans.map((x) => [x.id, x])).values()) {
    const key = `${kindOf(p)}|${p.term}`;
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/** Each target drops its plans of the kinds sent, then holds every plan sent; the rest is untouched. */
export function applyReplacement(
  state: Assignments,
  catalogue: Map<string, ModelPlan>,
  targets: string[],
  sent: ModelPlan[],
): Assignments {
  const kinds = new Set(sent.map(kindOf));
  const next: Assignments = new Map([...state].map(([m, held]) => [m, new Set(held)]));
  for (const merchantId of new Set(targets)) {
    const kept = [...(next.get(merchantId) ?? [])].filter((id) => !kinds.has(kindOf(catalogue.get(id)!)));
    next.set(merchantId, new Set([...kept, ...sent.map((p) => p.id)]));
  }
  return next;
}

/** Sorted "merchant plan" lines, comparable with assignmentSnapshot(). */
export function linesOf(state: Assignments): string[] {
  return [...state].flatMap(([m, held]) => [...held].map((p) => `${m} ${p}`)).sort();
}

/** Per merchant, the plan ids gained and lost from `before` to `after` (sorted); unchanged merchants are absent. */
export function changesOf(
  before: Assignments,
  after: Assignments,
): Array<{ merchant_id: string; added: string[]; removed: string[] }> {
  const merchants = [...new Set([...before.keys(), ...after.keys()])].sort();
  return merchants.flatMap((merchant_id) => {
    const was = before.get(merchant_id) ?? new Set<string>();
    const is = after.get(merchant_id) ?? new Set<string>();
    const added = [...is].filter((id) => !was.has(id)).sort();
    const removed = [...was].filter((id) => !is.has(id)).sort();
    return added.length || removed.length ? [{ merchant_id, added, removed }] : [];
  });
}
