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

/** A batch as a response takes it: its items made one at a time, once (arrays are not, by design). */
export type TakenBatch<T> = Generator<T, void, undefined>;

/**
 * `make` of each item, made one at a time as they are taken, `items` emptied
 * once they all are: the generators that handed the batch on keep the array
 * itself while the response waits.
 */
export function* takeEach<T, U>(items: T[], make: (item: T) => U): TakenBatch<U> {
  for (const item of items) yield make(item);
  items.length = 0;
}

/** An item's text; `first`: it opens the response's list (no separator before it). */
type ItemText<T> = (item: T, first: boolean) => string;

/** The text of a batch, its items' texts joined; `list.first` until an item has opened the response's list. */
function batchText<T>(batch: TakenBatch<T>, list: { first: boolean }, itemText: ItemText<T>): string {
  let text = '';
  for (const item of batch) {
    text += itemText(item, list.first);
    list.first = false;
  }
  return text;
}

async function* textOf<T>(
  head: string,
  batches: AsyncIterable<TakenBatch<T>>,
  itemText: ItemText<T>,
  tail: () => string,
): AsyncGenerator<string> {
  if (head) yield head;
  const list = { first: true };
  // The batch is a spent generator once its text is made, and the text is yielded unnamed:
  // this generator waits here for the socket holding neither.
  for await (const batch of batches) yield batchText(batch, list, itemText);
  const end = tail();
  if (end) yield end;
}

/**
 * A byte stream of `head`, each batch's items' texts, then `tail()`; destroying
 * it (a client that hung up) stops the reading after the batch in flight. The
 * batches are `takeEach`'s, so that none is held while the stream waits.
 */
export function streamedText<T>(
  head: string,
  batches: AsyncIterable<TakenBatch<T>>,
  itemText: ItemText<T>,
  tail: () => string = () => '',
): Readable {
  return Readable.from(textOf(head, batches, itemText, tail), {
    objectMode: false,
    highWaterMark: HIGH_WATER_MARK_BYTES,
  });
}
