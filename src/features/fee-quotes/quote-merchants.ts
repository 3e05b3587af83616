/**
 * The merchants one quote request names, each loaded once and reused for every
 * transaction of the request: whether the caller may see it, whether it is
 * ACTIVE, and its fee-rule timeline (plans-in-force.ts, the query behind
 * fee-rules?at=) indexed by what a transaction matches on. Bounded: a stream
 * over more merchants than it holds forgets the oldest and loads it again.
 */
import { createStringInterner } from '../../lib/interned-strings.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import type { HeldPlanRow, PlansInForce, TimelineRow } from '../fee-plans/plans-in-force.js';
import { heldIn } from '../fee-plans/plans-in-force.js';
import type { MerchantStatuses } from '../merchants/merchant-statuses.js';
import type { QuoteRefusalCode } from './fee-quotes-schemas.js';

/** Merchants a request keeps loaded at once. */
export const MAX_MERCHANTS_HELD = 10_000;
/** Timelines read from the database at once by one request: the pool serves other requests meanwhile. */
const LOADS_AT_ONCE = 4;

export interface MerchantBookDeps {
  plansInForce: Pick<PlansInForce, 'timeline' | 'projected'>;
  /** Merchants' statuses, held in memory while no change is pushed (merchants/merchant-statuses.ts). */
  merchantStatuses: Pick<MerchantStatuses, 'statusesOf'>;
}

/** What a transaction matches a plan on: card_brand, payment_method, is_international, has_installments, term. */
export interface PlanKind {
  cardBrand: string;
  paymentMethod: string;
  isInternational: boolean;
  installments: number;
}

const keyOfTransaction = (k: PlanKind) =>
  `${k.cardBrand} ${k.paymentMethod} ${k.isInternational} ${k.installments > 1} ${k.installments}`;
const keyOfPlan = (p: HeldPlanRow) =>
  `${p.cardBrand} ${p.paymentMethod} ${p.isInternational} ${p.hasInstallments} ${p.term}`;
/** The kinds a customer's plans name are few: the indexed timelines share one copy of each key instead of one each. */
const sharedKindKey = createStringInterner(1000);

type MerchantState =
  | { refused: QuoteRefusalCode }
  /** `now`: the plan in force at the request's instant by kind, found once (most lines ask that instant). */
  | { byKind: Map<string, TimelineRow[]>; now: Map<string, HeldPlanRow | QuoteRefusalCode> };

/** Each timeline indexed once: one held in memory is the same array for every request that reads it. */
const indexes = new WeakMap<TimelineRow[], Map<string, TimelineRow[]>>();

function indexByKind(timeline: TimelineRow[]): Map<string, TimelineRow[]> {
  const known = indexes.get(timeline);
  if (known) return known;
  const byKind = new Map<string, TimelineRow[]>();
  for (const row of timeline) {
    const key = sharedKindKey(keyOfPlan(row));
    const rows = byKind.get(key);
    if (rows) rows.push(row);
    else byKind.set(key, [row]);
  }
  indexes.set(timeline, byKind);
  return byKind;
}

/** The first plan in listing order that matches `kind`: the one fee-rules?at= lists for it. */
function matching<P extends HeldPlanRow>(plans: P[], kind: PlanKind): P | undefined {
  const key = keyOfTransaction(kind);
  return plans.find((p) => keyOfPlan(p) === key);
}

export function createMerchantBook(deps: MerchantBookDeps, principal: Principal, now: Date) {
  const { plansInForce, merchantStatuses } = deps;
  const { customerId } = principal;
  const states = new Map<string, MerchantState>();

  function remember(merchantId: string, state: MerchantState): void {
    if (states.size >= MAX_MERCHANTS_HELD) states.delete(states.keys().next().value as string);
    states.set(merchantId, state);
  }

  /** Which of `merchantIds` the caller may not see, and which are INACTIVE: one query for those not held. */
  async function refusals(merchantIds: string[]): Promise<Map<string, QuoteRefusalCode>> {
    const own = isMerchantCaller(principal) ? merchantIds.filter((id) => id === principal.merchantId) : merchantIds;
    const found = own.length > 0 ? await merchantStatuses.statusesOf(customerId, own) : [];
    const statuses = new Map(found.map((m) => [m.id, m.status]));
    const refused = new Map<string, QuoteRefusalCode>();
    for (const id of merchantIds) {
      const status = statuses.get(id);
      if (status === undefined) refused.set(id, 'merchant_not_found');
      else if (status === 'INACTIVE') refused.set(id, 'merchant_inactive');
    }
    return refused;
  }

  return {
    /** Loads the merchants among `merchantIds` not held yet (ids as the validator lower-cased them). */
    async load(merchantIds: Iterable<string>): Promise<void> {
      const wanted = new Set<string>();
      for (const id of merchantIds) if (!states.has(id)) wanted.add(id);
      if (wanted.size === 0) return;
      const missing = [...wanted];
      const refused = await refusals(missing);
      for (const [id, code] of refused) remember(id, { refused: code });
      const quotable = missing.filter((id) => !refused.has(id));
      for (let start = 0; start < quotable.length; start += LOADS_AT_ONCE) {
        const batch = quotable.slice(start, start + LOADS_AT_ONCE);
        // Seen to be the customer's just above: the timeline may be stored for it.
        const timelines = await Promise.all(batch.map((id) => plansInForce.timeline(customerId, id, async () => id)));
        batch.forEach((id, i) => {
          remember(id, { byKind: indexByKind(timelines[i]!), now: new Map() });
        });
      }
    },

    /**
     * The plan in force for a transaction of a loaded merchant at `at` (up to
     * now: `atText` is its ISO text), or why there is none. A future instant
     * asks the projection of pending changes, so it may read the database.
     * `at` the very `now` of the book is the request's instant: its answer is kept.
     */
    planFor(
      merchantId: string,
      kind: PlanKind,
      at: Date,
      atText: string,
    ): HeldPlanRow | QuoteRefusalCode | Promise<HeldPlanRow | QuoteRefusalCode> {
      const state = states.get(merchantId);
      if (!state) throw new Error(`merchant ${merchantId} was not loaded`);
      if ('refused' in state) return state.refused;
      if (at > now)
        return plansInForce
          .projected(customerId, merchantId, at, now)
          .then((plans) => matching(plans, kind) ?? 'no_plan_in_force');
      const key = keyOfTransaction(kind);
      if (at === now) {
        let plan = state.now.get(key);
        if (plan === undefined) {
          plan = heldIn(state.byKind.get(key) ?? [], atText)[0] ?? 'no_plan_in_force';
          state.now.set(key, plan);
        }
        return plan;
      }
      const rows = state.byKind.get(key);
      return (rows && heldIn(rows, atText)[0]) ?? 'no_plan_in_force';
    },
  };
}

export type MerchantBook = ReturnType<typeof createMerchantBook>;
