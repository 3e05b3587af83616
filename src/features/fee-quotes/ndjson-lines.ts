/**
 * The lines of an NDJSON body, read as they arrive: one batch per chunk of the
 * body, so the caller answers a batch before the next chunk is read (the body
 * is read no faster than the answer is written). A line longer than
 * MAX_LINE_CHARS is not kept: it comes out as `text: null`, and memory stays
 * bounded whatever the body holds. Blank lines are skipped.
 */
import { StringDecoder } from 'node:string_decoder';

/** The longest line kept: a transaction is a few hundred characters. */
export const MAX_LINE_CHARS = 16 * 1024;
/** A chunk with more lines than this is answered in several batches: a batch's merchants stay loaded together. */
export const MAX_BATCH_LINES = 1000;

/** A line of the body: its number (from 1) and its text, or null when it was too long. */
export interface NumberedLine {
  line: number;
  text: string | null;
}

export async function* ndjsonLines(body: AsyncIterable<Buffer | string>): AsyncGenerator<NumberedLine[]> {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  let overlong = false;
  let number = 0;
  const finish = (text: string, batch: NumberedLine[]) => {
    number++;
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (overlong || line.length > MAX_LINE_CHARS) batch.push({ line: number, text: null });
    else if (line.trim() !== '') batch.push({ line: number, text: line });
    overlong = false;
  };
  for await (const chunk of body) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let batch: NumberedLine[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      finish(partial + text.slice(start, end), batch);
      partial = '';
      start = end + 1;
      if (batch.length === MAX_BATCH_LINES) {
        yield batch;
        batch = [];
      }
    }
    if (!overlong) partial += text.slice(start);
    if (partial.length > MAX_LINE_CHARS) {
      overlong = true;
      partial = '';
    }
    if (batch.length > 0) yield batch;
  }
  const rest = partial + decoder.end();
  if (rest !== '' || overlong) {
    const batch: NumberedLine[] = [];
    finish(rest, batch);
    if (batch.length > 0) yield batch;
  }
}
