/**
 * The merchant listing as JSON text written while its rows are read (contract
 * section 20): `{"_embedded":{"merchants":[…]},"page":{…}}`, each merchant
 * serialised on its own by the one-merchant answer's serializer, so a page of
 * 10,000 is never held whole, as objects or as text.
 */
import type { Readable } from 'node:stream';
import { streamedText } from '../../lib/streamed-batches.js';
import type { MerchantPage, MerchantResource } from './merchants-service.js';

/** A byte stream of the page; destroying it (a client that hung up) stops the reading after the batch in flight. */
export function merchantListingStream(
  listing: MerchantPage,
  serialize: (merchant: MerchantResource) => string,
): Readable {
  return streamedText(
    '{"_embedded":{"merchants":[',
    listing.merchants,
    (merchant, first) => (first ? '' : ',') + serialize(merchant),
    () => `]},"page":${JSON.stringify(listing.page)}}`,
  );
}
