/**
 * Fee plans: pick plans from the catalogue, pick merchants (or all of them),
 * preview the change with a dry run, then apply. A 422 marks the plans and
 * merchants it names.
 */
import { useMemo, useState } from 'react';
import { Link } from 'wouter';
import { ApiError, client, describeError, unwrap } from '../api';
import { currentRole } from '../session';
import { useMerchantSearch } from '../merchants';
import { loadCatalogue, PlanFlags, planLabel } from '../plans';
import { heldOutcome, type Outcome, OutcomeNote } from '../outcome';
import { type DryRun, Preview } from '../preview';
import { effectiveAt, PendingChanges } from '../scheduled';
import { Empty, ErrorNote, formatDate, Loading, Pager, useLoad } from '../ui';

interface Refusal {
  message: string;
  plans: Set<string>;
  merchants: string[];
  conflicts: string[][];
}

export function AssignPage() {
  const [catalogue] = useLoad(loadCatalogue, []);
  const [brand, setBrand] = useState('');
  const [method, setMethod] = useState('');
  const [plans, setPlans] = useState<Set<string>>(new Set());
  const [allMerchants, setAllMerchants] = useState(false);
  const [merchants, setMerchants] = useState<Set<string>>(new Set());
  const [preview, setPreview] = useState<DryRun>();
  const [refusal, setRefusal] = useState<Refusal>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [busy, setBusy] = useState<'preview' | 'apply'>();
  const [when, setWhen] = useState('');
  const [version, setVersion] = useState(0);

  const all = catalogue.state === 'ready' ? catalogue.value : [];
  const brands = useMemo(() => [...new Set(all.map((p) => p.card_brand))].sort(), [all]);
  const methods = useMemo(() => [...new Set(all.map((p) => p.payment_method))].sort(), [all]);
  const shown = all.filter((p) => (!brand || p.card_brand === brand) && (!method || p.payment_method === method));
  const names = new Map(all.map((p) => [p.id, p]));
  const label = (id: string) => (names.has(id) ? planLabel(names.get(id)!) : id.slice(0, 8));

  const changed = () => {
    setPreview(undefined);
    setRefusal(undefined);
    setOutcome(undefined);
  };
  const toggle = (set: Set<string>, id: string, update: (s: Set<string>) => void) => {
    const next = new Set(set);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    update(next);
    changed();
  };

  const send = async (dryRun: boolean) => {
    setBusy(dryRun ? 'preview' : 'apply');
    setRefusal(undefined);
    setOutcome(undefined);
    const payment_plan_ids = [...plans];
    const effective_at = effectiveAt(when);
    const params = { query: dryRun ? { dry_run: true } : {} };
    try {
      // A dry run answers what would change (200); applying answers 201 and no body.
      const result = await unwrap(
        allMerchants
          ? client.POST('/v1/fee-rules/bulk-assign/all', { params, body: { payment_plan_ids, effective_at } })
          : client.POST('/v1/fee-rules/bulk-assign', {
              params,
              body: { merchant_ids: [...merchants], payment_plan_ids, effective_at },
            }),
      );
      if (dryRun && result && 'dry_run' in result) setPreview(result);
      else if (result && 'scheduled_change' in result) {
        setPreview(undefined);
        setOutcome({ ok: true, text: `Scheduled for ${formatDate(result.scheduled_change.effective_at)}.` });
        setVersion((v) => v + 1);
      } else {
        setPreview(undefined);
        const assigned = `Assigned ${plans.size} plan${plans.size === 1 ? '' : 's'} to ${allMerchants ? 'every merchant' : `${merchants.size} merchant${merchants.size === 1 ? '' : 's'}`}.`;
        setOutcome(heldOutcome(result) ?? { ok: true, text: assigned });
      }
    } catch (error) {
      const problem = error instanceof ApiError ? error.problem.body : undefined;
      setRefusal({
        message: describeError(error),
        plans: new Set(problem?.payment_plan_ids),
        merchants: problem?.merchant_ids ?? [],
        conflicts: problem?.conflicts?.map((c) => c.payment_plan_ids) ?? [],
      });
    } finally {
      setBusy(undefined);
    }
  };

  const ready = plans.size > 0 && (allMerchants || merchants.size > 0);
  return (
    <section aria-labelledby="assign-title">
      <div className="page-head">
        <h1 id="assign-title">Fee plans</h1>
        <p className="lead">
          Assign plans to merchants. Each merchant's plans of the same card brand, method, international and installment
          kind are replaced; the others stay.
        </p>
      </div>

      <h2>1. Plans</h2>
      <div className="filters">
        <label>
          <span>Card brand</span>
          <select value={brand} onChange={(e) => setBrand(e.target.value)}>
            <option value="">all brands</option>
            {brands.map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Payment method</span>
          <select value={method} onChange={(e) => setMethod(e.target.value)}>
            <option value="">all methods</option>
            {methods.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <p className="count">{plans.size} selected</p>
      </div>
      {catalogue.state === 'loading' && <Loading what="the catalogue" />}
      {catalogue.state === 'error' && <ErrorNote message={catalogue.message} />}
      {catalogue.state === 'ready' &&
        (shown.length === 0 ? (
          <Empty>No plans match these filters.</Empty>
        ) : (
          <div className="scroll">
            <table>
              <caption className="sr-only">Payment plan catalogue</caption>
              <thead>
                <tr>
                  <th scope="col">
                    <span className="sr-only">Select</span>
                  </th>
                  <th scope="col">Brand</th>
                  <th scope="col">Method</th>
                  <th scope="col">Term</th>
                  <th scope="col">Commission</th>
                  <th scope="col">Kind</th>
                  <th scope="col">
                    <span className="sr-only">Problem</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((plan) => {
                  const refused = refusal?.plans.has(plan.id);
                  return (
                    <tr key={plan.id} className={refused ? 'refused' : undefined}>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Select ${plan.card_brand} ${plan.payment_method} term ${plan.term} at ${plan.commission}%`}
                          checked={plans.has(plan.id)}
                          onChange={() => toggle(plans, plan.id, setPlans)}
                        />
                      </td>
                      <td data-label="Brand">{plan.card_brand}</td>
                      <td data-label="Method">{plan.payment_method}</td>
                      <td data-label="Term">{plan.term}</td>
                      <td data-label="Commission">{plan.commission}%</td>
                      <td data-label="Kind">
                        <PlanFlags plan={plan} />
                      </td>
                      <td>
                        {refused && (
                          <span className="error">
                            {refusal?.conflicts.some((c) => c.includes(plan.id))
                              ? 'conflicts with another selected plan'
                              : 'refused'}
                          </span>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        ))}

      <h2>2. Merchants</h2>
      <label className="inline">
        <input
          type="checkbox"
          checked={allMerchants}
          onChange={(e) => {
            setAllMerchants(e.target.checked);
            changed();
          }}
        />{' '}
        All merchants of the customer (those it has when you apply)
      </label>
      {!allMerchants && (
        <MerchantPicker
          selected={merchants}
          refused={refusal?.merchants ?? []}
          onToggle={(id) => toggle(merchants, id, setMerchants)}
        />
      )}

      <h2>3. Review and apply</h2>
      {refusal && (
        <div className="problem" role="alert">
          <p>{refusal.message}</p>
          {refusal.conflicts.map((group) => (
            <p key={group.join()}>
              Conflicting: {group.map((id) => (names.has(id) ? planLabel(names.get(id)!) : id)).join(' and ')}
            </p>
          ))}
          {refusal.merchants.length > 0 && <p>Unknown merchants: {refusal.merchants.join(', ')}</p>}
        </div>
      )}
      {currentRole() === 'VIEWER' ? (
        <p className="hint">Your role (VIEWER) only reads: an ADMIN or MEMBER assigns plans.</p>
      ) : (
        <>
          <div className="filters">
            <label>
              <span>Schedule for… (empty: now)</span>
              <input
                type="datetime-local"
                step={1}
                value={when}
                onChange={(e) => {
                  setWhen(e.target.value);
                  changed();
                }}
              />
            </label>
          </div>
          <div className="actions">
            <button type="button" disabled={!ready || busy !== undefined} onClick={() => void send(true)}>
              {busy === 'preview' ? 'Previewing…' : 'Preview change'}
            </button>
            <button
              type="button"
              className="primary"
              disabled={!ready || busy !== undefined}
              onClick={() => void send(false)}
            >
              {busy === 'apply' ? 'Applying…' : when ? 'Schedule' : 'Apply'}
            </button>
          </div>
        </>
      )}
      {!ready && <p className="hint">Select at least one plan and one merchant (or all merchants).</p>}
      {preview && <Preview result={preview} label={label} />}
      <OutcomeNote outcome={outcome} />
      <h2>Pending changes</h2>
      <PendingChanges version={version} planLabel={label} />
    </section>
  );
}

/** Merchants page by page, searched by the server among all of the customer's merchants. */
function MerchantPicker({
  selected,
  refused,
  onToggle,
}: {
  selected: Set<string>;
  refused: string[];
  onToggle: (id: string) => void;
}) {
  const { search, setSearch, query, setPage, listing } = useMerchantSearch(50);
  return (
    <div className="picker">
      <div className="filters">
        <label>
          <span>Search merchants</span>
          <input
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder="name or id"
            maxLength={100}
          />
        </label>
        <p className="count">{selected.size} selected</p>
      </div>
      {listing.state === 'loading' && <Loading what="merchants" />}
      {listing.state === 'error' && <ErrorNote message={listing.message} />}
      {listing.state === 'ready' && (
        <>
          {listing.value._embedded.merchants.length === 0 ? (
            <Empty>{query ? `No merchant matches “${query}”.` : 'No merchants.'}</Empty>
          ) : (
            <ul className="checklist">
              {listing.value._embedded.merchants.map((m) => (
                <li key={m.id} className={refused.includes(m.id) ? 'refused' : undefined}>
                  <label className="inline">
                    <input type="checkbox" checked={selected.has(m.id)} onChange={() => onToggle(m.id)} /> {m.name}
                  </label>
                  <Link href={`/merchants/${m.id}`} aria-label={`Plans of ${m.name}`}>
                    plans
                  </Link>
                </li>
              ))}
            </ul>
          )}
          <Pager page={listing.value.page} onPage={setPage} label={['merchant', 'merchants']} />
        </>
      )}
    </div>
  );
}
