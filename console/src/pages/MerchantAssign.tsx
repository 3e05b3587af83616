/**
 * Assigning plans to one merchant, now or scheduled for a moment ("schedule
 * for…"), and the pending changes that will reach it, each with a cancel button.
 */
import { useState } from 'react';
import type { Schemas } from '../../../clients/typescript/index';
import { client, describeError, MAX_PAGE_SIZE, unwrap } from '../api';
import { Empty, ErrorNote, formatDate, Loading, useLoad } from '../ui';

type ScheduledChange = Schemas['ScheduledChange'];

export function MerchantAssign({ id, onAssigned }: { id: string; onAssigned: () => void }) {
  const [catalogue] = useLoad(
    () => unwrap(client.GET('/v1/fee-rules', { params: { query: { page: 0, size: MAX_PAGE_SIZE } } })),
    [],
  );
  const [pending, reloadPending] = useLoad(
    () =>
      unwrap(
        client.GET('/v1/fee-rules/scheduled-changes', {
          params: { query: { status: 'PENDING', page: 0, size: MAX_PAGE_SIZE } },
        }),
      ),
    [],
  );
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [note, setNote] = useState<{ ok: boolean; text: string }>();
  const plans = catalogue.state === 'ready' ? catalogue.value.data : [];
  const label = (planId: string) => {
    const p = plans.find((plan) => plan.id === planId);
    return p ? `${p.card_brand} ${p.payment_method} ${p.term}x ${p.commission}%` : planId.slice(0, 8);
  };

  const cancel = async (change: ScheduledChange) => {
    try {
      await unwrap(client.DELETE('/v1/fee-rules/scheduled-changes/{id}', { params: { path: { id: change.id } } }));
      setNote({ ok: true, text: `Cancelled the change for ${formatDate(change.effective_at)}.` });
    } catch (error) {
      setNote({ ok: false, text: describeError(error) });
    }
    reloadPending();
  };

  const reaching = (c: ScheduledChange) => c.merchant_ids === null || c.merchant_ids.includes(id);

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
                  ...(when ? { effective_at: new Date(when).toISOString() } : {}),
                },
              }),
            );
            if (answer && 'scheduled_change' in answer) {
              setNote({ ok: true, text: `Scheduled for ${formatDate(answer.scheduled_change.effective_at)}.` });
              reloadPending();
            } else {
              setNote({ ok: true, text: `Assigned ${chosen.size} plan${chosen.size === 1 ? '' : 's'}.` });
              onAssigned();
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
      {note && (note.ok ? <p role="status">{note.text}</p> : <ErrorNote message={note.text} />)}
      <h2>Pending changes</h2>
      {pending.state === 'loading' && <Loading what="pending changes" />}
      {pending.state === 'error' && <ErrorNote message={pending.message} />}
      {pending.state === 'ready' &&
        (pending.value.data.filter(reaching).length === 0 ? (
          <Empty>No pending changes for this merchant.</Empty>
        ) : (
          <table data-testid="pending-changes">
            <caption className="sr-only">Pending changes that reach this merchant</caption>
            <thead>
              <tr>
                <th scope="col">Effective</th>
                <th scope="col">Merchants</th>
                <th scope="col">Plans</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {pending.value.data.filter(reaching).map((c) => (
                <tr key={c.id}>
                  <td data-label="Effective">{formatDate(c.effective_at)}</td>
                  <td data-label="Merchants">{c.kind === 'ALL' ? 'All' : c.merchant_ids?.length}</td>
                  <td data-label="Plans">{c.payment_plan_ids.map(label).join(', ')}</td>
                  <td data-label="Actions">
                    <button
                      type="button"
                      aria-label={`Cancel the change for ${formatDate(c.effective_at)}`}
                      onClick={() => void cancel(c)}
                    >
                      Cancel
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
    </>
  );
}
