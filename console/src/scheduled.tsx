/** The pending scheduled changes (all, or those that reach one merchant), each with a cancel button. */
import { useState } from 'react';
import type { Schemas } from '../../clients/typescript/index';
import { client, describeError, MAX_PAGE_SIZE, unwrap } from './api';
import { heldOutcome, type Outcome, OutcomeNote } from './outcome';
import { Empty, ErrorNote, formatDate, Loading, useLoad } from './ui';

type ScheduledChange = Schemas['ScheduledChange'];

/** `version`: bump it to reload after scheduling; `planLabel` names a plan id. */
export function PendingChanges({
  merchantId,
  version,
  planLabel,
}: {
  merchantId?: string;
  version: number;
  planLabel: (planId: string) => string;
}) {
  const [pending, reload] = useLoad(
    () =>
      unwrap(
        client.GET('/v1/fee-rules/scheduled-changes', {
          params: { query: { status: 'PENDING', page: 0, size: MAX_PAGE_SIZE } },
        }),
      ),
    [version],
  );
  const [note, setNote] = useState<Outcome>();
  const reaching = (c: ScheduledChange) =>
    merchantId === undefined || c.merchant_ids === null || c.merchant_ids.includes(merchantId);

  const cancel = async (change: ScheduledChange) => {
    try {
      const answer = await unwrap(
        client.DELETE('/v1/fee-rules/scheduled-changes/{id}', { params: { path: { id: change.id } } }),
      );
      setNote(
        heldOutcome(answer) ?? { ok: true, text: `Cancelled the change for ${formatDate(change.effective_at)}.` },
      );
    } catch (error) {
      setNote({ ok: false, text: describeError(error) });
    }
    reload();
  };

  const shown = pending.state === 'ready' ? pending.value.data.filter(reaching) : [];
  return (
    <>
      <OutcomeNote outcome={note} />
      {pending.state === 'loading' && <Loading what="pending changes" />}
      {pending.state === 'error' && <ErrorNote message={pending.message} />}
      {pending.state === 'ready' &&
        (shown.length === 0 ? (
          <Empty>No pending changes{merchantId ? ' for this merchant' : ''}.</Empty>
        ) : (
          <table data-testid="pending-changes">
            <caption className="sr-only">Pending scheduled changes</caption>
            <thead>
              <tr>
                <th scope="col">Effective</th>
                <th scope="col">Merchants</th>
                <th scope="col">Plans</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((c) => (
                <tr key={c.id}>
                  <td data-label="Effective">{formatDate(c.effective_at)}</td>
                  <td data-label="Merchants">{c.kind === 'ALL' ? 'All' : c.merchant_ids?.length}</td>
                  <td data-label="Plans">{c.payment_plan_ids.map(planLabel).join(', ')}</td>
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

/** A datetime-local value as the instant the API takes; empty: undefined (now). */
export function effectiveAt(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}
