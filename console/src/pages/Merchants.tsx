import { useState } from 'react';
import { Link } from 'wouter';
import { listMerchants } from '../merchants';
import { Empty, ErrorNote, formatDate, Loading, Pager, useLoad } from '../ui';

export function MerchantsPage() {
  const [page, setPage] = useState(0);
  const [listing] = useLoad(() => listMerchants(page, 25), [page]);
  return (
    <section aria-labelledby="merchants-title">
      <div className="page-head">
        <h1 id="merchants-title">Merchants</h1>
      </div>
      {listing.state === 'loading' && <Loading what="merchants" />}
      {listing.state === 'error' && <ErrorNote message={listing.message} />}
      {listing.state === 'ready' &&
        (listing.value.data.length === 0 ? (
          <Empty>This customer has no merchants yet.</Empty>
        ) : (
          <>
            <table>
              <thead>
                <tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Created</th></tr>
              </thead>
              <tbody>
                {listing.value.data.map((m) => (
                  <tr key={m.id}>
                    <td data-label="Name"><Link href={`/merchants/${m.id}`}>{m.name}</Link></td>
                    <td data-label="Id"><code>{m.id}</code></td>
                    <td data-label="Created">{formatDate(m.create_date)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={listing.value.page} onPage={setPage} label="merchants" />
          </>
        ))}
    </section>
  );
}
