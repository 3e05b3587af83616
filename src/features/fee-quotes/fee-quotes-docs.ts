/** What the OpenAPI document says of the fee quotes; their HTTP is in fee-quotes-routes.ts. */
import { operationDocs } from '../../schemas/common.js';
import { MAX_JSON_TRANSACTIONS } from './fee-quotes-schemas.js';
import { MAX_LINE_CHARS } from './ndjson-lines.js';

const ARITHMETIC =
  "Amounts are decimal strings with at most the currency's ISO 4217 minor-unit digits (USD, ARS, MXN, BRL, COP, PEN, UYU, EUR: 2; CLP: 0; BHD: 3), positive, at most 10^13 minor units. " +
  "fee = amount × commission / 100, rounded half-to-even to the minor unit; net = amount − fee; both with exactly the currency's minor digits. The arithmetic is exact (integers of minor units; no floating point).";

const PLAN =
  "The plan in force is the merchant's plan at `at` (default now) with the transaction's card_brand, payment_method and is_international, has_installments = (installments > 1) and term = installments, found as GET /v1/merchants/{id}/fee-rules?at= finds it: the history for past instants, the pending scheduled changes for future ones.";

const REFUSALS =
  'A transaction that cannot be quoted answers, in its place, a QuoteRefusal `{ id, merchant_id, error: { code, detail } }` (its codes: no plan in force, a merchant the caller may not see (a merchant key sees only its own merchant), an INACTIVE merchant; see the schema); the others are quoted. A refusal is not a failure of the request: the answer is still 200.';

const NDJSON =
  `With \`Content-Type: application/x-ndjson\` the body is one QuoteTransaction per line (with its own \`at\` if wanted; default the instant the request arrived) and the answer, \`application/x-ndjson\`, one line per transaction line in order, written as the body is read: any number of lines in constant memory, read no faster than the client reads the answer. Blank lines are skipped. ` +
  `A line that is not JSON answers \`{ line, error: { code: "malformed_json" } }\` on its line; one that is not a valid transaction (or longer than ${MAX_LINE_CHARS} characters) \`{ line, error: { code: "validation_failed", errors } }\`; the stream goes on. ` +
  'The whole body must arrive within REQUEST_TIMEOUT_SECONDS: split longer batches.';

export const FEE_QUOTES_DOCS = operationDocs('fee quotes', {
  createFeeQuotes: {
    summary: 'Quote what transactions pay',
    description:
      `JSON: 1..${MAX_JSON_TRANSACTIONS} transactions at one instant → 200 \`{ quotes }\` in the same order. ${ARITHMETIC} ${PLAN} ${REFUSALS} ` +
      'A transaction with a bad amount (a number, zero, negative, too many decimals, too large), an unknown currency or negative installments is a 400 `validation_failed` naming it (`transactions[3].amount`), and nothing is quoted. ' +
      `${NDJSON} Nothing is changed: read-only keys and VIEWERs may quote. With an Idempotency-Key a JSON answer is kept as for any POST; an NDJSON answer is not kept. A body that is neither JSON nor NDJSON: 415.`,
  },
});
