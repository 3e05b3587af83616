/**
 * A merchant's tax identifier, checked by stdnum (a maintained library of
 * national identifiers): a CUIT's check digit in Argentina, an RFC's format,
 * date and check character in Mexico, and the type that fits the country.
 * The API and the operator's import both check through here.
 */
import { createRequire } from 'node:module';
import type { Validator } from 'stdnum';
import type { Country } from './merchants-schemas.js';

export interface TaxIdentification {
  type: 'CUIT' | 'RFC';
  number: string;
}

/**
 * Only the two validators used, loaded on first use: stdnum's index holds
 * every country's, about 16 MB of each server's memory from the start
 * (docs/performance.md). The package has no exports map, so its CommonJS
 * files are its published layout; require keeps the checks synchronous.
 */
const requireCjs = createRequire(import.meta.url);
let byCountry: Record<Country, { type: TaxIdentification['type']; validator: Validator }> | undefined;
const validators = () =>
  (byCountry ??= {
    ARG: { type: 'CUIT', validator: requireCjs('stdnum/lib/cjs/ar/cuit.js') as Validator },
    MEX: { type: 'RFC', validator: requireCjs('stdnum/lib/cjs/mx/rfc.js') as Validator },
  });

/** stdnum's reason ("The number has an invalid length.") as the rest of a field message. */
const reason = (message: string) => message.charAt(0).toLowerCase() + message.slice(1).replace(/\.$/, '');

/** The identifier in its compact form (no dashes or spaces, upper case), or why it is refused. */
export function checkTaxIdentification(
  country: Country,
  tax: TaxIdentification,
): { ok: TaxIdentification } | { refusal: string } {
  const expected = validators()[country];
  if (tax.type !== expected.type)
    return { refusal: `must be a ${expected.type}: merchants in ${country} are identified by their ${expected.type}` };
  const result = expected.validator.validate(tax.number);
  if (!result.isValid) return { refusal: `is not a valid ${expected.type}: ${reason(result.error.message)}` };
  return { ok: { type: expected.type, number: result.compact } };
}
