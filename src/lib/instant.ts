import { ValidationError } from '../errors.js';

/** The instants PostgreSQL stores and a Date writes as YYYY-MM-DDTHH:MM:SS.sssZ: years 0001..9999 in UTC. */
const EARLIEST = new Date('0001-01-01T00:00:00.000Z').getTime();
const LATEST = new Date('9999-12-31T23:59:59.999Z').getTime();

/**
 * An instant a client sent (schemas: InstantText in src/schemas/common.ts). The
 * pattern keeps out what a Date cannot parse (a leap second); an offset can
 * still carry 0001-01-01 or 9999-12-31 out of the years PostgreSQL takes in
 * ISO form: those are the same 400 as any other bad value, never a failed query.
 */
export function parseInstant(field: string, text: string, detail = 'The query parameters are not valid.'): Date {
  const at = new Date(text);
  const time = at.getTime();
  if (Number.isNaN(time)) throw new ValidationError([{ field, message: 'is not an instant' }], detail);
  if (time < EARLIEST || time > LATEST)
    throw new ValidationError([{ field, message: 'must lie between 0001-01-01 and 9999-12-31 in UTC' }], detail);
  return at;
}
