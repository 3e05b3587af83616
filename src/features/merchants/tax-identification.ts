/**
 * A merchant's tax identifier, checked by stdnum (a maintained library of
 * national identifiers): a CUIT's check digit in Argentina, an RFC's format,
 * date and check character in Mexico, and the type that fits the country.
 * The API and the operator's import both check through here.
 */
import { stdnum, type Validator } from 'stdnum';
import type { Country } from './merchants-schemas.js';

export interface TaxIdentification {
  type: 'CUIT' | 'RFC';
  number: string;
}

/** stdnum's validator of an identifier; its table is typed loosely, so a missing one fails at start, not on a request. */
function validatorOf(country: string, identifier: string): Validator {
  const validator = stdnum[country]?.[identifier];
  if (!validator) throw new Error(`stdnum has no ${country} ${identifier} validator`);
  return validator;
}

const BY_COUNTRY = {
  ARG: { type: 'CUIT', validator: validatorOf('AR', 'cuit') },
  MEX: { type: 'RFC', validator: validatorOf('MX', 'rfc') },
} as const;

/** stdnum's reason ("The number has an invalid length.") as the rest of a field message. */
const reason = (message: string) => message.charAt(0).toLowerCase() + message.slice(1).replace(/\.$/, '');

/** The identifier in its compact form (no dashes or spaces, upper case), or why it is refused. */
export function checkTaxIdentification(
  country: Country,
  tax: TaxIdentification,
): { ok: TaxIdentification } | { refusal: string } {
  const expected = BY_COUNTRY[country];
  if (tax.type !== expected.type)
    return { refusal: `must be a ${expected.type}: merchants in ${country} are identified by their ${expected.type}` };
  const result = expected.validator.validate(tax.number);
  if (!result.isValid) return { refusal: `is not a valid ${expected.type}: ${reason(result.error.message)}` };
  return { ok: { type: expected.type, number: result.compact } };
}
