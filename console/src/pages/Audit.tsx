import { useState } from 'react';
import type { operations } from '../../../clients/typescript/index';
import { client, unwrap } from '../api';
import { Empty, ErrorNote, formatDate, Loading, Pager, useLoad } from '../ui';

type Filters = Pick<NonNullable<operations['listAuditEvents']['parameters']['query']>, 'action' | 'from' | 'to'>;

export function AuditPage() {
  const [page, setPage] = useState(0);
  const [filters, setFilters] = useState<Filters>({});
  const [listing] = useLoad(
    () => unwrap(client.GET('/v1/audit-events', { params: { query: { page, size: 25, ...filters } } })),
    [page, filters],
  );
  return (
    <section aria-labelledby="audit-title">
      <div className="page-head">
        <h1 id="audit-title">Audit log</h1>
      </div>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const value = (name: string) => String(form.get(name) ?? '').trim();
          const iso = (name: string) => (value(name) ? new Date(value(name)).toISOString() : undefined);
          setFilters({
            ...(value('action') && { action: value('action') }),
            ...(iso('from') && { from: iso('from') }),
            ...(iso('to') && { to: iso('to') }),
          });
          setPage(0);
        }}
      >
        <label>
          <span>Action</span>
          <input name="action" placeholder="e.g. api_key.created" />
        </label>
        <label>
          <span>From</span>
          <input name="from" type="datetime-local" />
        </label>
        <label>
          <span>To</span>
          <input name="to" type="datetime-local" />
        </label>
        <button type="submit">Filter</button>
      </form>
      {listing.state === 'loading' && <Loading what="events" />}
      {listing.state === 'error' && <ErrorNote message={listing.message} />}
      {listing.state === 'ready' &&
        (listing.value.data.length === 0 ? (
          <Empty>No events match.</Empty>
        ) : (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {listing.value.data.map((event) => (
                  <tr key={event.id}>
                    <td data-label="When">{formatDate(event.create_date)}</td>
                    <td data-label="Action">
                      <code>{event.action}</code>
                    </td>
                    <td data-label="Actor">{event.actor.user ?? event.actor.type}</td>
                    <td data-label="Details">
                      <code className="details">{JSON.stringify(event.details)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={listing.value.page} onPage={setPage} label={['event', 'events']} />
          </>
        ))}
    </section>
  );
}
