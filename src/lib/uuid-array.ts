/**
 * A text[] literal of ids: one parameter however many ids, and the same on both
 * drivers (cast it with `::uuid[]`). Only for ids already validated as UUIDs.
 */
export function toUuidArray(ids: string[]): string {
  return `{${ids.join(',')}}`;
}
