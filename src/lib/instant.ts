import { ValidationError } from '../errors.js';

/**
 * An instant of a query parameter. Schemas admit RFC 3339 date-times (format
 * date-time), a few of which are no instant a Date holds (a leap second, 23:59:60):
 * those are the same 400 as any other bad value.
 */
export function parseInstant(field: string, text: string): Date {
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new ValidationError([{ field, message: 'is not an instant' }], 'The query parameters are not valid.');
  return at;
}
