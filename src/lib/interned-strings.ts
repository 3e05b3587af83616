/**
 * One copy of each repeated string a long-lived cache holds. Rows read from the
 * database carry a fresh string per cell, so thousands of cached rows naming the
 * same few plans and instants would each keep their own copies; the table is
 * bounded and starts afresh when full (strings handed out stay valid).
 */
export function createStringInterner(maxEntries: number): (value: string) => string {
  const known = new Map<string, string>();
  return (value) => {
    const found = known.get(value);
    if (found !== undefined) return found;
    if (known.size >= maxEntries) known.clear();
    known.set(value, value);
    return value;
  };
}
