/**
 * The fee-rule catalogue: platform plans and the customer's own, active or
 * retired; create a plan of the customer's own, retire one (merchants that hold
 * it keep it).
 */
import { useState } from 'react';
import type { Schemas } from '../../../clients/typescript/index';
import { client, describeError, MAX_PAGE_SIZE, unwrap } from '../api';
import { heldOutcome, type Outcome, OutcomeNote, sentForApproval } from '../outcome';
import { PlanFlags } from '../plans';
import { Empty, ErrorNote, Loading, Pager, useLoad } from '../ui';

type Status = 'ACTIVE' | 'RETIRED';

export function CataloguePage() {
  const [status, setStatus] = useState<Status>('ACTIVE');
  const [page, setPage] = useState(0);
  const [listing, reload] = useLoad(
    () => unwrap(client.GET('/v1/fee-rules', { params: { query: { status, page, size: MAX_PAGE_SIZE } } })),
    [status, page],
  );
  const [note, setNote] = useState<Outcome>();

  const retire = async (plan: Schemas['FeeRule']) => {
    if (!window.confirm(`Retire ${plan.card_brand} ${plan.payment_method} ${plan.term}x ${plan.commission}%?`)) return;
    try {
      const answer = await unwrap(client.DELETE('/v1/fee-rules/{id}', { params: { path: { id: plan.id } } }));
      setNote(
        heldOutcome(answer) ?? {
          ok: true,
          text: 'Plan retired. Merchants that hold it keep it until a change replaces it.',
        },
      );
      reload();
    } catch (error) {
      setNote({ ok: false, text: describeError(error) });
    }
  };

  return (
    <section aria-labelledby="catalogue-title">
      <div className="page-head">
        <h1 id="catalogue-title">Catalogue</h1>
        <p className="lead">
          Platform plans and your own. Plans never change: to change a rate, create a plan and assign it.
        </p>
      </div>
      <NewPlanForm
        onCreated={(outcome) => {
          setNote(outcome);
          reload();
        }}
      />
      <OutcomeNote outcome={note} />
      <div className="filters">
        <label>
          <span>Status</span>
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as Status);
              setPage(0);
            }}
          >
            <option value="ACTIVE">Active</option>
            <option value="RETIRED">Retired</option>
          </select>
        </label>
      </div>
      {listing.state === 'loading' && <Loading what="the catalogue" />}
      {listing.state === 'error' && <ErrorNote message={listing.message} />}
      {listing.state === 'ready' &&
        (listing.value.data.length === 0 ? (
          <Empty>No {status === 'ACTIVE' ? 'active' : 'retired'} plans.</Empty>
        ) : (
          <>
            <table data-testid="catalogue">
              <caption className="sr-only">Plans of the catalogue</caption>
              <thead>
                <tr>
                  <th scope="col">Brand</th>
                  <th scope="col">Method</th>
                  <th scope="col">Term</th>
                  <th scope="col">Commission</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Owner</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {listing.value.data.map((p) => (
                  <tr key={p.id}>
                    <td data-label="Brand">{p.card_brand}</td>
                    <td data-label="Method">{p.payment_method}</td>
                    <td data-label="Term">{p.term}</td>
                    <td data-label="Commission">{p.commission}%</td>
                    <td data-label="Kind">
                      <PlanFlags plan={p} />
                    </td>
                    <td data-label="Owner">{p.owner === 'PLATFORM' ? 'Platform' : 'Yours'}</td>
                    <td data-label="Actions">
                      {p.owner === 'CUSTOMER' && p.status === 'ACTIVE' && (
                        <button
                          type="button"
                          aria-label={`Retire ${p.card_brand} ${p.payment_method} ${p.term}x ${p.commission}%`}
                          onClick={() => void retire(p)}
                        >
                          Retire
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={listing.value.page} onPage={setPage} label={['plan', 'plans']} />
          </>
        ))}
    </section>
  );
}

function NewPlanForm({ onCreated }: { onCreated: (outcome: Outcome) => void }) {
  const [error, setError] = useState<string>();
  return (
    <details className="panel">
      <summary>Create a plan</summary>
      <form
        className="filters"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const data = new FormData(form);
          setError(undefined);
          try {
            const plan = await unwrap(
              client.POST('/v1/fee-rules', {
                body: {
                  card_brand: String(data.get('card_brand')),
                  payment_method: String(data.get('payment_method')),
                  term: Number(data.get('term')),
                  commission: Number(data.get('commission')),
                  has_installments: data.get('has_installments') === 'on',
                  is_international: data.get('is_international') === 'on',
                },
              }),
            );
            form.reset();
            // Under the customer's four-eyes policy the plan waits for another ADMIN's approval.
            onCreated(
              'change_request' in plan
                ? sentForApproval(plan.change_request.id)
                : {
                    ok: true,
                    text: `Created ${plan.card_brand} ${plan.payment_method} ${plan.term}x ${plan.commission}%.`,
                  },
            );
          } catch (err) {
            setError(describeError(err));
          }
        }}
      >
        <label>
          <span>Card brand</span>
          <input name="card_brand" required pattern="[A-Za-z0-9_]{1,32}" placeholder="VISA" />
        </label>
        <label>
          <span>Payment method</span>
          <input name="payment_method" required pattern="[A-Za-z0-9_]{1,32}" placeholder="CREDIT" />
        </label>
        <label>
          <span>Term</span>
          <input name="term" type="number" min={0} max={999} required defaultValue={1} />
        </label>
        <label>
          <span>Commission (%)</span>
          <input name="commission" type="number" min={0} step="0.0001" required />
        </label>
        <label className="check">
          <input name="has_installments" type="checkbox" /> <span>Installments</span>
        </label>
        <label className="check">
          <input name="is_international" type="checkbox" /> <span>International</span>
        </label>
        <button type="submit">Create plan</button>
      </form>
      {error && <ErrorNote message={error} />}
    </details>
  );
}
