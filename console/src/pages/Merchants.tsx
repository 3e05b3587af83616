import { Link } from 'wouter';
import { useMerchantSearch } from '../merchants';
import { StatusTag } from './Merchant';
import { Empty, ErrorNote, formatDate, Loading, Pager } from '../ui';

export function MerchantsPage() {
  const { search, setSearch, query, setPage, listing } = useMerchantSearch(25);
  return (
    <section aria-labelledby="merchants-title">
      <div className="page-head">
        <h1 id="merchants-title">Merchants</h1>
        <Link href="/merchants/new" className="button primary">
          Add merchant
        </Link>
      </div>
      <div className="filters">
        <label>
          <span>Search merchants</span>
          <input
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder="name or id"
            maxLength={100}
          />
        </label>
      </div>
      {listing.state === 'loading' && <Loading what="merchants" />}
      {listing.state === 'error' && <ErrorNote message={listing.message} />}
      {listing.state === 'ready' &&
        (listing.value._embedded.merchants.length === 0 ? (
          <Empty>{query ? `No merchant matches “${query}”.` : 'This customer has no merchants yet.'}</Empty>
        ) : (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Code</th>
                  <th scope="col">Id</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {listing.value._embedded.merchants.map((m) => (
                  <tr key={m.id}>
                    <td data-label="Name">
                      <Link href={`/merchants/${m.id}`}>{m.name}</Link>
                    </td>
                    <td data-label="Status">
                      <StatusTag status={m.status} />
                    </td>
                    <td data-label="Code">{m.merchant_code ?? '—'}</td>
                    <td data-label="Id">
                      <code>{m.id}</code>
                    </td>
                    <td data-label="Created">{formatDate(m.create_date)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={listing.value.page} onPage={setPage} label={['merchant', 'merchants']} />
          </>
        ))}
    </section>
  );
}
