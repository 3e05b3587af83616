/**
 * Assigning plans to one merchant, now or scheduled for a moment ("schedule
 * for…"), and the pending changes that will reach it, each with a cancel button.
 */
import { useState } from 'react';
import { client, describeError, unwrap } from '../api';
import { loadCatalogue, planLabel } from '../plans';
import { heldOutcome, type Outcome, OutcomeNote } from '../outcome';
import { effectiveAt, PendingChanges } from '../scheduled';
import { ErrorNote, formatDate, Loading, useLoad } from '../ui';

export function MerchantAssign({ id, onAssigned }: { id: string; onAssigned: () => void }) {
  const [catalogue] = useLoad(loadCatalogue, []);
  const [version, setVersion] = useState(0);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [note, setNote] = useState<Outcome>();
  const plans = catalogue.state === 'ready' ? catalogue.value : [];
  const label = (planId: string) => {
    const p = plans.find((plan) => plan.id === planId);
    return p ? planLabel(p) : planId.slice(0, 8);
  };

  return (
    <>
      <form
        aria-label="Assign plans to this merchant"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const when = String(new FormData(form).get('effective_at') ?? '');
          setNote(undefined);
          try {
            const answer = await unwrap(
              client.POST('/v1/merchants/{id}/fee-rules', {
                params: { path: { id }, query: {} },
                body: {
                  payment_plan_ids: [...chosen],
                  effective_at: effectiveAt(when),
                },
              }),
            );
            if (answer && 'scheduled_change' in answer) {
              setNote({ ok: true, text: `Scheduled for ${formatDate(answer.scheduled_change.effective_at)}.` });
              setVersion((v) => v + 1);
            } else {
              const held = heldOutcome(answer);
              setNote(held ?? { ok: true, text: `Assigned ${chosen.size} plan${chosen.size === 1 ? '' : 's'}.` });
              if (!held) onAssigned();
            }
            setChosen(new Set());
            form.reset();
          } catch (error) {
            setNote({ ok: false, text: describeError(error) });
          }
        }}
      >
        {catalogue.state === 'loading' && <Loading what="the catalogue" />}
        {catalogue.state === 'error' && <ErrorNote message={catalogue.message} />}
        <fieldset className="plan-picks">
          <legend>Plans</legend>
          {plans.map((p) => (
            <label key={p.id} className="check">
              <input
                type="checkbox"
                checked={chosen.has(p.id)}
                onChange={() => {
                  const next = new Set(chosen);
                  if (next.has(p.id)) next.delete(p.id);
                  else next.add(p.id);
                  setChosen(next);
                }}
              />{' '}
              <span>{label(p.id)}</span>
            </label>
          ))}
        </fieldset>
        <div className="filters">
          <label>
            <span>Schedule for… (empty: now)</span>
            <input name="effective_at" type="datetime-local" step={1} />
          </label>
          <button type="submit" disabled={chosen.size === 0}>
            Assign
          </button>
        </div>
      </form>
      <OutcomeNote outcome={note} />
      <h2>Pending changes</h2>
      <PendingChanges merchantId={id} version={version} planLabel={label} />
    </>
  );
}
