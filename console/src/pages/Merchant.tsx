/** One merchant: its details, an edit form, deactivation; its plans now, and at a moment picked by the user (history); a quote calculator. */
import { useState } from 'react';
import { Link } from 'wouter';
import type { Schemas } from '../../../clients/typescript/index';
import { client, describeError, MAX_PAGE_SIZE, unwrap } from '../api';
import { Dialog } from '../dialog';
import { MerchantForm } from '../merchant-form';
import { getMerchant } from '../merchants';
import { PlanFlags, type HeldPlan, type PaymentPlan } from '../plans';
import { Empty, ErrorNote, formatDate, Loading, useLoad } from '../ui';
import { MerchantAssign } from './MerchantAssign';
import { QuoteCalculator } from './QuoteCalculator';

export function MerchantPage({ id, customerId }: { id: string; customerId: string }) {
  const [current, reloadCurrent] = useLoad(
    () =>
      unwrap(
        client.GET('/v1/payment-plans', {
          params: { query: { merchant_id: id, is_selected: true, page: 0, size: MAX_PAGE_SIZE } },
        }),
      ),
    [id],
  );
  const [loaded] = useLoad(() => getMerchant(id), [id]);
  const [changed, setChanged] = useState<Schemas['Merchant']>();
  const merchant = changed ?? (loaded.state === 'ready' ? loaded.value : undefined);
  return (
    <section aria-labelledby="merchant-title">
      <div className="page-head">
        <p className="crumbs">
          <Link href="/merchants">Merchants</Link> /
        </p>
        <h1 id="merchant-title">
          {merchant?.name ?? (
            <>
              Merchant <code>{id.slice(0, 8)}</code>
            </>
          )}
          {merchant && <StatusTag status={merchant.status} />}
        </h1>
        <p className="lead">
          <code>{id}</code>
        </p>
      </div>
      {loaded.state === 'loading' && <Loading what="the merchant" />}
      {loaded.state === 'error' && <ErrorNote message={loaded.message} />}
      {merchant && <Details merchant={merchant} customerId={customerId} onChanged={setChanged} />}
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
      <h2>Quote a transaction</h2>
      <QuoteCalculator id={id} />
    </section>
  );
}

export function StatusTag({ status }: { status: Schemas['Merchant']['status'] }) {
  return <span className={`tag status-${status.toLowerCase()}`}>{status === 'ACTIVE' ? 'Active' : 'Inactive'}</span>;
}

/** What the merchant is, the form to change it, and deactivation (or reactivation) after a confirmation. */
function Details(props: {
  merchant: Schemas['Merchant'];
  customerId: string;
  onChanged: (m: Schemas['Merchant']) => void;
}) {
  const { merchant } = props;
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const deactivate = merchant.status === 'ACTIVE';
  const changeStatus = async () => {
    setBusy(true);
    setError(undefined);
    try {
      props.onChanged(
        await unwrap(
          client.PATCH('/v1/merchants/{id}', {
            params: { path: { id: merchant.id } },
            body: { status: deactivate ? 'INACTIVE' : 'ACTIVE' },
          }),
        ),
      );
      setConfirming(false);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  if (editing)
    return (
      <div className="panel">
        <h2>Edit merchant</h2>
        <MerchantForm
          customerId={props.customerId}
          merchant={merchant}
          onSaved={(saved) => {
            props.onChanged(saved);
            setEditing(false);
          }}
          onCancel={() => setEditing(false)}
        />
      </div>
    );
  const address = merchant.address;
  const rep = merchant.representative;
  const settlement = merchant.settlement_condition;
  const rows: Array<[string, string | null | undefined]> = [
    ['Business name', merchant.business_name],
    ['Trading name', merchant.fantasy_name],
    ['Legal type', merchant.legal_type === 'NATURAL_PERSON' ? 'Person' : merchant.legal_type && 'Company'],
    ['Country', merchant.country],
    [merchant.tax_identification?.type ?? 'Tax identifier', merchant.tax_identification?.number],
    ['Tax condition', merchant.tax?.type],
    ['Phone', merchant.phone],
    ['Activity', merchant.activity],
    ['Category', merchant.category],
    [
      'Settlement',
      settlement && `${settlement.transaction_fee}, ${settlement.settlement}, CBU/CVU ${settlement.cbu_or_cvu}`,
    ],
    ['Merchant code', merchant.merchant_code],
    ['E-mail', merchant.email],
    [
      'Address',
      address &&
        [
          `${address.street} ${address.number}`,
          address.floor && `floor ${address.floor}`,
          address.apartment && `apt. ${address.apartment}`,
          `${address.zip} ${address.city}`,
          address.state,
        ]
          .filter(Boolean)
          .join(', '),
    ],
    [
      'Representative',
      rep &&
        `${rep.name} ${rep.surname} (${rep.type.toLowerCase()}), ${rep.identification.type} ${rep.identification.number}${rep.birth_date ? `, born ${rep.birth_date}` : ''}, ${rep.email}, ${rep.phone}`,
    ],
    ['Notes', merchant.additional_info],
    ['Created', formatDate(merchant.create_date)],
    ['Last changed', formatDate(merchant.update_date)],
  ];
  return (
    <div className="panel">
      <dl className="facts" data-testid="merchant-details">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value || '—'}</dd>
          </div>
        ))}
      </dl>
      {error && <ErrorNote message={error} />}
      <div className="actions">
        <button type="button" onClick={() => setEditing(true)}>
          Edit merchant
        </button>
        <button type="button" className={deactivate ? 'danger' : undefined} onClick={() => setConfirming(true)}>
          {deactivate ? 'Deactivate' : 'Reactivate'}
        </button>
      </div>
      {confirming && (
        <Dialog
          title={deactivate ? 'Deactivate this merchant?' : 'Reactivate this merchant?'}
          confirm={deactivate ? 'Deactivate merchant' : 'Reactivate merchant'}
          danger={deactivate}
          busy={busy}
          onConfirm={() => void changeStatus()}
          onClose={() => setConfirming(false)}
        >
          <p>
            {deactivate
              ? `${merchant.name}'s API keys stop working at once and it gets no new fee plans. It keeps its plans and stays listed; you can reactivate it later.`
              : `${merchant.name}'s API keys work again and it can be assigned fee plans.`}
          </p>
          {error && <ErrorNote message={error} />}
        </Dialog>
      )}
    </div>
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
