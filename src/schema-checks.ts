/**
 * Checks the services run on input that does not arrive as an HTTP body (an
 * NDJSON line of a fee quote, an import document read from a file), compiled
 * from the API's own schemas by its body validator, with the same words in
 * their refusals. Each is compiled once per process, when first asked for.
 */
import { QuoteLine } from './features/fee-quotes/fee-quotes-schemas.js';
import type { LineCheck } from './features/fee-quotes/fee-quotes-service.js';
import type { DocumentCheck } from './features/operator/import-checks.js';
import { ImportDocument } from './features/operator/import-schema.js';
import { describeRefusals } from './plugins/problem-details.js';
import { createStrictAjv } from './plugins/validation.js';

let lineCheck: LineCheck | undefined;
let documentCheck: DocumentCheck | undefined;

/** One NDJSON line of a fee quote request. */
export function quoteLineCheck(): LineCheck {
  if (lineCheck) return lineCheck;
  const check = createStrictAjv().compile<Parameters<LineCheck>[0]>(QuoteLine);
  lineCheck = (raw) => {
    if (check(raw)) return { line: raw as never };
    return {
      errors: describeRefusals(check.errors ?? []).map(({ path, message }) => ({ field: path || 'line', message })),
    };
  };
  return lineCheck;
}

/** The operator's import document. */
export function importDocumentCheck(): DocumentCheck {
  if (documentCheck) return documentCheck;
  const check = createStrictAjv().compile<ImportDocument>(ImportDocument);
  documentCheck = (raw) => {
    if (check(raw)) return { document: raw };
    const [first] = describeRefusals(check.errors ?? []);
    return { path: first?.path ?? '', message: first?.message ?? 'is not a valid import document' };
  };
  return documentCheck;
}
