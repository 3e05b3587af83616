/**
 * What a transaction of this merchant pays: POST /v1/fee-quotes with one
 * transaction, now or at a picked instant. The service does the arithmetic
 * (exact, half-to-even); the page only shows its answer or why there is none.
 */
import { useState } from 'react';
import type { Schemas } from '../../../clients/typescript/index';
import { ApiError, client, describeError, unwrap } from '../api';
import { ErrorNote, formatDate } from '../ui';

/** The region's currencies first; the service knows every ISO 4217 code. */
const CURRENCIES = ['ARS', 'BRL', 'CLP', 'COP', 'MXN', 'PEN', 'USD', 'UYU', 'EUR'];

type Answer = Schemas['Quote'] | Schemas['QuoteRefusal'];

export function QuoteCalculator({ id }: { id: string }) {
  const [answer, setAnswer] = useState<{ quote: Answer; amount: string }>();
  const [error, setError] = useState<string>();
  return (
    <>
      <form
        aria-label="Quote a transaction"
        className="grid-form quote-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const text = (name: string) => String(form.get(name) ?? '');
          const when = text('at');
          setError(undefined);
          setAnswer(undefined);
          try {
            // The operation also answers NDJSON, so the client types its answer as unknown: this is the JSON one.
            const { quotes } = (await unwrap(
              client.POST('/v1/fee-quotes', {
                body: {
                  ...(when ? { at: new Date(when).toISOString() } : {}),
                  transactions: [
                    {
                      merchant_id: id,
                      amount: text('amount').trim(),
                      currency: text('currency'),
                      card_brand: text('card_brand').trim(),
                      payment_method: text('payment_method').trim(),
                      installments: Number(text('installments')),
                      is_international: form.get('is_international') === 'on',
                    },
                  ],
                },
              }),
            )) as Schemas['QuoteAnswer'];
            setAnswer({ quote: quotes[0]!, amount: text('amount').trim() });
          } catch (err) {
            setError(withFields(err));
          }
        }}
      >
        <label>
          <span>Amount</span>
          <input name="amount" required inputMode="decimal" pattern="[0-9]+([.][0-9]+)?" placeholder="1234.56" />
        </label>
        <label>
          <span>Currency</span>
          <select name="currency" defaultValue="ARS">
            {CURRENCIES.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Card brand</span>
          <input name="card_brand" required defaultValue="VISA" />
        </label>
        <label>
          <span>Payment method</span>
          <input name="payment_method" required defaultValue="CREDIT" />
        </label>
        <label>
          <span>Installments (0 for debit)</span>
          <input name="installments" type="number" min={0} max={999} required defaultValue={1} />
        </label>
        <label className="inline">
          <input name="is_international" type="checkbox" /> International
        </label>
        <label>
          <span>At (empty: now)</span>
          <input name="at" type="datetime-local" step={1} />
        </label>
        <div className="actions">
          <button type="submit">Quote</button>
        </div>
      </form>
      {error && <ErrorNote message={error} />}
      {answer && <QuoteResult {...answer} />}
    </>
  );
}

/** The service's words, with each refused field named as the form names it ("amount must have no decimals…"). */
function withFields(error: unknown): string {
  const fields = error instanceof ApiError ? (error.problem.body?.errors ?? []) : [];
  const named = fields.map((e) => `${e.field.replace(/^transactions\[0\]\./, '')} ${e.message}`);
  return [describeError(error), ...named].join(' ');
}

const REFUSALS: Record<Schemas['QuoteRefusal']['error']['code'], string> = {
  no_plan_in_force: 'No plan in force matches this transaction at that instant.',
  merchant_not_found: 'This merchant is not one you may quote.',
  merchant_inactive: 'This merchant is INACTIVE.',
};

function QuoteResult({ quote, amount }: { quote: Answer; amount: string }) {
  if ('error' in quote) return <ErrorNote message={REFUSALS[quote.error.code]} />;
  return (
    <dl className="facts" data-testid="quote-result" aria-live="polite">
      <dt>Amount</dt>
      <dd>
        {amount} {quote.currency}
      </dd>
      <dt>Commission</dt>
      <dd>{quote.commission}%</dd>
      <dt>Fee</dt>
      <dd data-testid="quote-fee">
        {quote.fee} {quote.currency}
      </dd>
      <dt>Net</dt>
      <dd data-testid="quote-net">
        {quote.net} {quote.currency}
      </dd>
      <dt>Plan</dt>
      <dd>
        <code>{quote.payment_plan_id}</code>
      </dd>
      <dt>At</dt>
      <dd>{formatDate(quote.at)}</dd>
    </dl>
  );
}
