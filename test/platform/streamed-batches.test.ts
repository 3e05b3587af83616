/**
 * A response written while its rows are read holds no batch while it waits on
 * its socket (src/lib/streamed-batches.ts): the rows of a batch already written
 * are collectable though the generators that read them are suspended.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { streamedText, type TakenBatch, takeEach } from '../../src/lib/streamed-batches.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

interface Row {
  id: number;
  padding: string;
}

function rowOf(id: number, made: WeakRef<Row>[]): Row {
  const row = { id, padding: 'x'.repeat(64) + id };
  made.push(new WeakRef(row));
  return row;
}

/** Batches as the DALs yield them: a suspended generator, the last batch read named in its frame. */
async function* readBatches(count: number, size: number, made: WeakRef<Row>[]) {
  for (let b = 0; b < count; b++) {
    const rows = Array.from({ length: size }, (_, i) => rowOf(b * size + i, made));
    yield rows;
  }
}

/** As the services map them. */
async function* mapped(batches: AsyncIterable<Row[]>) {
  for await (const rows of batches) yield takeEach(rows, (row) => ({ ...row }));
}

async function settle() {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
  }
}

describe('streamed batches', () => {
  it('lets go of a written batch while the stream waits for its reader', async () => {
    const made: WeakRef<Row>[] = [];
    const stream = streamedText(
      '[',
      mapped(readBatches(3, 500, made)),
      (row, first) => (first ? '' : ',') + JSON.stringify(row),
    );
    // Take nothing: the stream fills its buffer with the head and the first batch, then waits.
    stream.read(0);
    await settle();
    assert.equal(made.length, 500, 'only the first batch was read (back-pressure)');
    assert.ok(stream.readableLength > 0, 'its text waits in the buffer');
    const alive = made.filter((ref) => ref.deref() !== undefined).length;
    assert.equal(alive, 0, `rows of the written batch still alive while waiting: ${alive} of 500`);
    stream.destroy();
  });

  it('writes every item once, in order, between the head and the tail', async () => {
    const made: WeakRef<Row>[] = [];
    const stream = streamedText(
      '{"rows":[',
      mapped(readBatches(3, 4, made)),
      (row, first) => (first ? '' : ',') + String(row.id),
      () => ']}',
    );
    let text = '';
    for await (const chunk of stream) text += chunk;
    assert.deepEqual(JSON.parse(text), { rows: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] });
  });

  it('puts a separator only between items: empty batches and no batches at all', async () => {
    async function* batchesOf(...lists: number[][]) {
      for (const list of lists) yield takeEach(list, (n) => n);
    }
    const text = async (batches: AsyncIterable<TakenBatch<number>>) => {
      let out = '';
      for await (const chunk of streamedText(
        '[',
        batches,
        (n, first) => (first ? '' : ',') + n,
        () => ']',
      ))
        out += chunk;
      return out;
    };
    assert.equal(await text(batchesOf([], [1, 2], [], [3], [])), '[1,2,3]');
    assert.equal(await text(batchesOf()), '[]');
    assert.equal(await text(batchesOf([], [])), '[]');
  });

  it('takeEach leaves a batch it did not finish as it was', () => {
    const rows = [1, 2, 3];
    const taken = takeEach(rows, (n) => n * 2);
    assert.deepEqual([taken.next().value, taken.next().value], [2, 4]);
    assert.deepEqual(rows, [1, 2, 3]);
    assert.deepEqual([...taken], [6]);
    assert.deepEqual(rows, [], 'emptied once every item is taken');
  });
});
