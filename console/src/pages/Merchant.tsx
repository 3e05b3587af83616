/** One merchant: its plans now, and the plans it held at a moment picked by the user (history). */
import { useState } from 'react';
import { Link } from 'wouter';
import { client, MAX_PAGE_SIZE, unwrap } from '../api';
import { findMerchant } from '../merchants';
import { MerchantAssign } from './MerchantAssign';
import { PlanFlags, type HeldPlan, type PaymentPlan } from '../plans';
import { Empty, ErrorNote, formatDate, Loading, useLoad } from '../ui';

export function MerchantPage({ id }: { id: string }) {
  const [current, reloadCurrent] = useLoad(
    () =>
      unwrap(
        client.GET('/v1/payment-plans', {
          params: { query: { merchant_id: id, is_selected: true, page: 0, size: MAX_PAGE_SIZE } },
        }),
      ),
    [id],
  );
  const [merchant] = useLoad(() => findMerchant(id), [id]);
  const name = merchant.state === 'ready' ? merchant.value?.name : undefined;
  return (
    <section aria-labelledby="merchant-title">
      <div className="page-head">
        <p className="crumbs">
          <Link href="/merchants">Merchants</Link> /
        </p>
        <h1 id="merchant-title">
          {name ?? (
            <>
              Merchant <code>{id.slice(0, 8)}</code>
            </>
          )}
        </h1>
        <p className="lead">
          <code>{id}</code>
        </p>
      </div>
      <h2>Plans now</h2>
      {current.state === 'loading' && <Loading what="plans" />}
      {current.state === 'error' && <ErrorNote message={current.message} />}
      {current.state === 'ready' && (
        <PlanTable plans={current.value.data} label="Current plans" testId="current-plans" />
      )}
      <h2>Assign plans</h2>
      <MerchantAssign id={id} onAssigned={reloadCurrent} />
      <h2>Plans at a date</h2>
      <History id={id} />
    </section>
  );
}

function History({ id }: { id: string }) {
  const [at, setAt] = useState<string>();
  const [history] = useLoad(
    () =>
      at
        ? unwrap(client.GET('/v1/merchants/{id}/fee-rules', { params: { path: { id }, query: { at } } }))
        : Promise.resolve(undefined),
    [id, at],
  );
  return (
    <>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const value = String(new FormData(e.currentTarget).get('at') ?? '');
          if (value) setAt(new Date(value).toISOString());
        }}
      >
        <label>
          <span>Date and time</span>
          <input name="at" type="datetime-local" required step={1} />
        </label>
        <button type="submit">Show plans</button>
      </form>
      {history.state === 'loading' && at && <Loading what="history" />}
      {history.state === 'error' && <ErrorNote message={history.message} />}
      {history.state === 'ready' && history.value && (
        <>
          <p className="count">Plans held at {formatDate(history.value.at)}</p>
          <PlanTable plans={history.value.data} label="Plans at that time" testId="history-plans" showAssigned />
        </>
      )}
    </>
  );
}

function PlanTable({
  plans,
  label,
  testId,
  showAssigned,
}: {
  plans: (PaymentPlan | HeldPlan)[];
  label: string;
  testId: string;
  showAssigned?: boolean;
}) {
  if (plans.length === 0) return <Empty>No plans {showAssigned ? 'at that time' : 'assigned'}.</Empty>;
  return (
    <table data-testid={testId}>
      <caption className="sr-only">{label}</caption>
      <thead>
        <tr>
          <th scope="col">Brand</th>
          <th scope="col">Method</th>
          <th scope="col">Term</th>
          <th scope="col">Commission</th>
          <th scope="col">Kind</th>
          {showAssigned && <th scope="col">Assigned</th>}
        </tr>
      </thead>
      <tbody>
        {plans.map((p) => (
          <tr key={p.id}>
            <td data-label="Brand">{p.card_brand}</td>
            <td data-label="Method">{p.payment_method}</td>
            <td data-label="Term">{p.term}</td>
            <td data-label="Commission">{p.commission}%</td>
            <td data-label="Kind">
              <PlanFlags plan={p} />
            </td>
            {showAssigned && (
              <td data-label="Assigned">{formatDate('assigned_at' in p ? p.assigned_at : undefined)}</td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
