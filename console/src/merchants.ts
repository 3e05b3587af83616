import { useEffect, useState } from 'react';
import { client, unwrap } from './api';
import type { Schemas } from '../../clients/typescript/index';
import { useLoad } from './ui';

/** One page of the caller's merchants; `search` is the API's `q` (name contains, or id starts with). */
export function listMerchants(page: number, size: number, search = '') {
  const q = search.trim();
  return unwrap(client.GET('/v1/merchants', { params: { query: { page, size, ...(q ? { q } : {}) } } }));
}

/** The merchant with this id (a 404 problem when the caller cannot see it). */
export function getMerchant(id: string): Promise<Schemas['Merchant']> {
  return unwrap(client.GET('/v1/merchants/{id}', { params: { path: { id } } }));
}

/** Wait this long after the last keystroke before asking the server. */
const SEARCH_DELAY_MS = 250;

/** A searchable, paged merchant listing: typing searches the server and goes back to the first page. */
export function useMerchantSearch(size: number) {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(0);
  useEffect(() => {
    const timer = setTimeout(() => {
      setQuery(search.trim().slice(0, 100));
      setPage(0);
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [search]);
  const [listing] = useLoad(() => listMerchants(page, size, query), [page, size, query]);
  return { search, setSearch, query, setPage, listing };
}
