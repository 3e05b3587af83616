/**
 * Approvals (contract section 23): under the customer's four-eyes policy each
 * fee change waits here for a second ADMIN. Pending requests first, then the
 * decided ones, newest first; each opens on its own page to approve or reject.
 */
import { useState } from 'react';
import { Link } from 'wouter';
import { client, MAX_PAGE_SIZE, unwrap } from '../api';
import { type ChangeRequest, kindOf, personOf, RequestStatus, summaryOf } from '../change-requests';
import { Empty, ErrorNote, formatDate, Loading, Pager, useLoad } from '../ui';

const DECIDED_PAGE = 25;

export function ApprovalsPage() {
  const [page, setPage] = useState(0);
  const [pending] = useLoad(
    () => unwrap(client.GET('/v1/change-requests', { params: { query: { status: 'PENDING', size: MAX_PAGE_SIZE } } })),
    [],
  );
  const [all] = useLoad(
    () => unwrap(client.GET('/v1/change-requests', { params: { query: { page, size: DECIDED_PAGE } } })),
    [page],
  );
  return (
    <section aria-labelledby="approvals-title">
      <div className="page-head">
        <h1 id="approvals-title">Approvals</h1>
        <p className="lead">
          Fee changes held for a second ADMIN by your approval policy. The requester cannot approve their own change,
          nor can the user an API key that asked belongs to or whoever made it; a pending request expires after 7 days.
        </p>
      </div>
      <h2 id="pending-title">Waiting for approval</h2>
      {pending.state === 'loading' && <Loading what="pending requests" />}
      {pending.state === 'error' && <ErrorNote message={pending.message} />}
      {pending.state === 'ready' &&
        (pending.value.data.length === 0 ? (
          <Empty>No change waits for approval.</Empty>
        ) : (
          <Requests requests={pending.value.data} pending caption="Change requests waiting for approval" />
        ))}
      <h2>Decided</h2>
      {all.state === 'loading' && <Loading what="decided requests" />}
      {all.state === 'error' && <ErrorNote message={all.message} />}
      {all.state === 'ready' && (
        <>
          {all.value.data.some((r) => r.status !== 'PENDING') ? (
            <Requests
              requests={all.value.data.filter((r) => r.status !== 'PENDING')}
              caption="Decided change requests, newest first"
            />
          ) : (
            <Empty>No decided requests{page > 0 ? ' on this page' : ''}.</Empty>
          )}
          <Pager page={all.value.page} onPage={setPage} label={['change request', 'change requests']} />
        </>
      )}
    </section>
  );
}

function Requests({ requests, pending, caption }: { requests: ChangeRequest[]; pending?: boolean; caption: string }) {
  return (
    <table data-testid={pending ? 'pending-requests' : 'decided-requests'}>
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Requested</th>
          <th scope="col">Change</th>
          <th scope="col">Effect</th>
          <th scope="col">Requested by</th>
          <th scope="col">{pending ? 'Expires' : 'Status'}</th>
          <th scope="col">
            <span className="sr-only">Open</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {requests.map((r) => (
          <tr key={r.id}>
            <td data-label="Requested">{formatDate(r.create_date)}</td>
            <td data-label="Change">{kindOf(r)}</td>
            <td data-label="Effect">{summaryOf(r.preview)}</td>
            <td data-label="Requested by">{personOf(r.requested_by)}</td>
            <td data-label={pending ? 'Expires' : 'Status'}>
              {pending ? formatDate(r.expires_at) : <RequestStatus status={r.status} />}
            </td>
            <td>
              <Link
                href={`/approvals/${r.id}`}
                aria-label={`${pending ? 'Review' : 'Open'}: ${kindOf(r)}, requested ${formatDate(r.create_date)}`}
              >
                {pending ? 'Review' : 'Open'}
              </Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
