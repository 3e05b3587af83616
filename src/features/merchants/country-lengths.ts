/**
 * The platform's per-country lengths of a merchant's fields (its v2 PATCH
 * page, contract section 20), applied on every write; the schema's limits are
 * the widest of both countries.
 */
import type { FieldError } from '../../errors.js';
import type { Country } from './merchants-schemas.js';

interface Rule {
  min: number;
  max: number;
  digits?: true;
  /** What the rule is called, for the message. */
  what?: string;
}

const RULES: Record<Country, Record<string, Rule>> = {
  ARG: {
    business_name: { min: 1, max: 50 },
    fantasy_name: { min: 1, max: 50 },
    'address.city': { min: 1, max: 30 },
    'address.zip': { min: 8, max: 8, what: 'a CPA (Código Postal Argentino, e.g. B1900AAA)' },
    'address.number': { min: 1, max: 10, digits: true },
  },
  MEX: {
    business_name: { min: 1, max: 60 },
    fantasy_name: { min: 1, max: 18 },
    'address.city': { min: 1, max: 18 },
    'address.zip': { min: 5, max: 10 },
    'address.number': { min: 1, max: 6, digits: true },
  },
};

function refusal(country: Country, rule: Rule, value: string): string | undefined {
  const length = [...value].length;
  const unit = rule.digits ? 'digits' : 'characters';
  const size = rule.min === rule.max ? `exactly ${rule.min}` : `${rule.min} to ${rule.max}`;
  if (rule.digits && !/^[0-9]+$/.test(value)) return `must be digits only, ${size} in ${country}`;
  if (length >= rule.min && length <= rule.max) return undefined;
  return `must be ${size} ${unit} in ${country}${rule.what ? `, ${rule.what}` : ''} (it has ${length})`;
}

/** What breaks the country's lengths among the fields sent (`address` whole, when sent). */
export function countryLengthErrors(
  country: Country | null,
  fields: {
    business_name?: string | undefined;
    fantasy_name?: string | undefined;
    address?: { city: string; zip: string; number: string } | undefined;
  },
): FieldError[] {
  if (country === null) return []; // a merchant the import made without one: nothing to measure against
  const values: Record<string, string | undefined> = {
    business_name: fields.business_name,
    fantasy_name: fields.fantasy_name,
    'address.city': fields.address?.city,
    'address.zip': fields.address?.zip,
    'address.number': fields.address?.number,
  };
  const errors: FieldError[] = [];
  for (const [field, rule] of Object.entries(RULES[country])) {
    const value = values[field];
    const message = value === undefined ? undefined : refusal(country, rule, value);
    if (message) errors.push({ field, message });
  }
  return errors;
}
