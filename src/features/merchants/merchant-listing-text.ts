/**
 * The merchant listing as JSON text written while its rows are read (contract
 * section 20): `{"_embedded":{"merchants":[…]},"page":{…}}`, each merchant
 * serialised on its own by the one-merchant answer's serializer, so a page of
 * 10,000 is never held whole, as objects or as text.
 */
import { Readable } from 'node:stream';
import type { MerchantPage, MerchantResource } from './merchants-service.js';

/** Text waiting for the socket before the next batch is read: the stream's back-pressure. */
const HIGH_WATER_MARK_BYTES = 16 * 1024;

/** A batch's merchants as JSON text, each after a comma but the page's first. */
function batchText(
  batch: Iterable<MerchantResource>,
  first: boolean,
  serialize: (merchant: MerchantResource) => string,
) {
  let text = '';
  for (const merchant of batch) {
    text += (first ? '' : ',') + serialize(merchant);
    first = false;
  }
  return text;
}

async function* listingText(listing: MerchantPage, serialize: (merchant: MerchantResource) => string) {
  yield '{"_embedded":{"merchants":[';
  let first = true;
  for await (const batch of listing.merchants) {
    // Not named: a suspended generator keeps its named locals, and it waits here for the socket.
    yield batchText(batch, first, serialize);
    first = false;
  }
  yield `]},"page":${JSON.stringify(listing.page)}}`;
}

/** A byte stream of the page; destroying it (a client that hung up) stops the reading after the batch in flight. */
export function merchantListingStream(
  listing: MerchantPage,
  serialize: (merchant: MerchantResource) => string,
): Readable {
  return Readable.from(listingText(listing, serialize), { objectMode: false, highWaterMark: HIGH_WATER_MARK_BYTES });
}
