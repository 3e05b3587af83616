/**
 * Fee quotes (contract section 24): what transactions pay under the plan in
 * force at an instant, found as GET /v1/merchants/{id}/fee-rules?at= finds it
 * (fee-plans/plans-in-force.ts). A JSON request of up to 1,000 transactions is
 * answered whole; an NDJSON body is answered line by line as it is read, with
 * each merchant loaded once per request (quote-merchants.ts). Reads only:
 * nothing is written, so nothing goes through the unit of work.
 */
import { type FieldError, ValidationError } from '../../errors.js';
import { parseInstant } from '../../lib/instant.js';
import type { Principal } from '../../lib/principal.js';
import { createMerchantBook, type MerchantBookDeps } from './quote-merchants.js';
import { ndjsonLines, MAX_LINE_CHARS, type NumberedLine } from './ndjson-lines.js';
import { quoteText, readTransaction, type Transaction, type TransactionInput } from './quote-pricing.js';

/** What the validator makes of one NDJSON line: the line as the QuoteLine schema admits it, or what is wrong with it. */
export type LineCheck = (raw: unknown) => { line: TransactionInput & { at?: string } } | { errors: FieldError[] };

export interface FeeQuotesServiceDeps extends MerchantBookDeps {
  checkLine: LineCheck;
}

export interface QuoteRequestInput {
  at?: string | undefined;
  transactions: TransactionInput[];
}

/** A line of the NDJSON answer that is not a quote: the line could not be read as a transaction. */
interface LineErrorResource {
  line: number;
  error: { code: 'malformed_json' | 'validation_failed'; detail: string; errors?: FieldError[] };
}

const invalidLine = (line: number, errors: FieldError[]): LineErrorResource => ({
  line,
  error: { code: 'validation_failed', detail: 'The line is not a valid transaction.', errors },
});

export function createFeeQuotesService(deps: FeeQuotesServiceDeps) {
  /** A line as a transaction at its instant (with its text when the line named one), or the error object answered on its line. */
  function readLine(
    { line, text }: NumberedLine,
    defaultAt: Date,
  ): { transaction: Transaction; at: Date; atText?: string } | LineErrorResource {
    if (text === null)
      return {
        line,
        error: { code: 'validation_failed', detail: `The line is longer than ${MAX_LINE_CHARS} characters.` },
      };
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return { line, error: { code: 'malformed_json', detail: 'The line is not valid JSON.' } };
    }
    const checked = deps.checkLine(raw);
    if ('errors' in checked) return invalidLine(line, checked.errors);
    const transaction = readTransaction(checked.line);
    if (Array.isArray(transaction)) return invalidLine(line, transaction);
    if (checked.line.at === undefined) return { transaction, at: defaultAt };
    try {
      const at = parseInstant('at', checked.line.at);
      return { transaction, at, atText: at.toISOString() };
    } catch (err) {
      if (err instanceof ValidationError) return invalidLine(line, err.errors ?? []);
      throw err;
    }
  }

  return {
    /**
     * POST /v1/fee-quotes with JSON: every transaction at one instant, in order, as
     * the QuoteAnswer's JSON text; a bad one is a 400 naming it.
     */
    async quote(principal: Principal, request: QuoteRequestInput): Promise<string> {
      const now = new Date();
      const at = request.at === undefined ? now : parseInstant('at', request.at, 'The body is not valid.');
      const errors: FieldError[] = [];
      const transactions: Transaction[] = [];
      request.transactions.forEach((input, i) => {
        const read = readTransaction(input);
        if (Array.isArray(read)) errors.push(...read.map((e) => ({ ...e, field: `transactions[${i}].${e.field}` })));
        else transactions.push(read);
      });
      if (errors.length > 0) throw new ValidationError(errors, 'The body is not valid.');
      const book = createMerchantBook(deps, principal, now);
      await book.load(transactions.map((t) => t.merchantId));
      const atText = at.toISOString();
      const quotes: string[] = [];
      for (const t of transactions) quotes.push(quoteText(t, await book.planFor(t.merchantId, t, at, atText), atText));
      return `{"quotes":[${quotes.join(',')}]}`;
    },

    /**
     * POST /v1/fee-quotes with NDJSON: one answer line per transaction line, in
     * order, produced a chunk of the body at a time and only as fast as it is
     * consumed. Stopping the iteration (the client went away) stops reading the body.
     */
    async *quoteLines(principal: Principal, body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
      const now = new Date();
      const nowText = now.toISOString();
      const book = createMerchantBook(deps, principal, now);
      for await (const batch of ndjsonLines(body)) {
        const read = batch.map((line) => readLine(line, now));
        const merchantIds: string[] = [];
        for (const r of read) if ('transaction' in r) merchantIds.push(r.transaction.merchantId);
        await book.load(merchantIds);
        let out = '';
        for (const r of read) {
          if (!('transaction' in r)) {
            out += `${JSON.stringify(r)}\n`;
            continue;
          }
          const { transaction, at } = r;
          const atText = r.atText ?? nowText;
          let plan = book.planFor(transaction.merchantId, transaction, at, atText);
          if (plan instanceof Promise) plan = await plan;
          out += `${quoteText(transaction, plan, atText)}\n`;
        }
        yield out;
      }
    },
  };
}

export type FeeQuotesService = ReturnType<typeof createFeeQuotesService>;
