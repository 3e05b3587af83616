/**
 * What a response written while its rows are read (the merchant listing, the
 * audit export) needs so that a batch is not held while the response waits on
 * its socket: a suspended generator keeps its named locals alive, and with
 * several such responses in flight every young-generation collection copied
 * their last batches and promoted most of them (most of a 10,000-merchant
 * page's collection time).
 */
import { Readable } from 'node:stream';

/** Text waiting for the socket before the next batch is read: the stream's back-pressure. */
const HIGH_WATER_MARK_BYTES = 16 * 1024;

/**
 * `make` of each item, made one at a time as they are taken, `items` emptied
 * once they all are: the generators that handed the batch on keep the array
 * itself while the response waits.
 */
export function* takeEach<T, U>(items: T[], make: (item: T) => U): Generator<U> {
  for (const item of items) yield make(item);
  items.length = 0;
}

/** The text of each batch, its items' texts joined (`first`: the item opens the whole response's list). */
function batchText<T>(batch: Iterable<T>, first: boolean, itemText: (item: T, first: boolean) => string): string {
  let text = '';
  for (const item of batch) {
    text += itemText(item, first);
    first = false;
  }
  return text;
}

async function* textOf<T>(
  head: string,
  batches: AsyncIterable<Iterable<T>>,
  itemText: (item: T, first: boolean) => string,
  tail: () => string,
): AsyncGenerator<string> {
  if (head) yield head;
  let first = true;
  for await (const batch of batches) {
    // Yielded unnamed: this generator waits here for the socket.
    yield batchText(batch, first, itemText);
    first = false;
  }
  const end = tail();
  if (end) yield end;
}

/**
 * A byte stream of `head`, each batch's items' texts, then `tail()`; destroying
 * it (a client that hung up) stops the reading after the batch in flight.
 */
export function streamedText<T>(
  head: string,
  batches: AsyncIterable<Iterable<T>>,
  itemText: (item: T, first: boolean) => string,
  tail: () => string = () => '',
): Readable {
  return Readable.from(textOf(head, batches, itemText, tail), {
    objectMode: false,
    highWaterMark: HIGH_WATER_MARK_BYTES,
  });
}
