/**
 * A key's `allowed_ips` (contract section 22): up to 20 IPv4 or IPv6 addresses
 * or CIDR ranges, parsed with ipaddr.js. An IPv4-mapped IPv6 client
 * (`::ffff:10.0.0.1`, what a dual-stack socket reports for an IPv4 peer) is the
 * IPv4 client it stands for, and an IPv4 client matches ranges written in the
 * mapped form too: one machine, one answer, whichever way its socket spells it.
 * `::1` is not `127.0.0.1`: they are different addresses. A client address that
 * cannot be parsed is outside every range.
 */
import ipaddr from 'ipaddr.js';

export const MAX_ALLOWED_IPS = 20;

type V4Range = [ipaddr.IPv4, number];
type V6Range = [ipaddr.IPv6, number];

/** Parsed ranges, by kind, as the hot path matches them, and the answers already found for client addresses. */
export interface AllowedRanges {
  v4: V4Range[];
  v6: V6Range[];
  /** Client address → allowed: most keys are used from a few addresses, so most requests parse nothing. */
  decided: Map<string, boolean>;
}

/** Answers kept per key before they are forgotten all at once (a key used from very many addresses parses again). */
const DECIDED_LIMIT = 256;

/** Why an item is not an address or range, or null when it is one. */
function problemOf(item: string): string | null {
  const [address, prefix, ...rest] = item.split('/');
  if (rest.length > 0 || address === undefined) return 'is not an IP address or CIDR range';
  if (address.includes('%')) return 'must not carry an IPv6 zone';
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!v4 && !ipaddr.IPv6.isValid(address))
    return 'is not an IP address or CIDR range (IPv4 a.b.c.d or IPv6, with an optional /prefix; host names are not taken)';
  if (prefix === undefined) return null;
  const max = v4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `has a prefix length outside 0..${max}`;
  return null;
}

/** The canonical form of a valid item: the network address of a range, the RFC 5952 form of IPv6. */
function canonical(item: string): string {
  const [address, prefix] = item.split('/') as [string, string | undefined];
  const parsed = ipaddr.parse(address);
  const text = (ip: ipaddr.IPv4 | ipaddr.IPv6) =>
    ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();
  if (prefix === undefined) return text(parsed);
  const network =
    parsed.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(item) : ipaddr.IPv6.networkAddressFromCIDR(item);
  return `${text(network)}/${Number(prefix)}`;
}

/** The items that are not addresses or ranges, with their index and why; empty when all are. */
export function invalidAllowedIps(items: readonly string[]): Array<{ index: number; message: string }> {
  const problems: Array<{ index: number; message: string }> = [];
  items.forEach((item, index) => {
    const problem = problemOf(item);
    if (problem) problems.push({ index, message: `"${item}" ${problem}` });
  });
  return problems;
}

/** Valid items in canonical form, without repeats (check them with invalidAllowedIps first). */
export function canonicalAllowedIps(items: readonly string[]): string[] {
  return [...new Set(items.map(canonical))];
}

/** Stored items (canonical) as the ranges the hot path matches; null for none: any address. */
export function parseAllowedIps(items: readonly string[]): AllowedRanges | null {
  if (items.length === 0) return null;
  const ranges: AllowedRanges = { v4: [], v6: [], decided: new Map() };
  for (const item of items) {
    const range = item.includes('/')
      ? ipaddr.parseCIDR(item)
      : ((a) => [a, a.kind() === 'ipv4' ? 32 : 128] as const)(ipaddr.parse(item));
    if (range[0].kind() === 'ipv4') ranges.v4.push(range as V4Range);
    else ranges.v6.push(range as V6Range);
  }
  return ranges;
}

/** Whether `client` (request.ip) lies in one of `ranges`. */
export function isAllowedAddress(client: string | undefined, ranges: AllowedRanges): boolean {
  if (!client) return false;
  let allowed = ranges.decided.get(client);
  if (allowed === undefined) {
    allowed = matches(client, ranges);
    if (ranges.decided.size >= DECIDED_LIMIT) ranges.decided.clear();
    ranges.decided.set(client, allowed);
  }
  return allowed;
}

/** The client address in the strict forms an allowed range is written in (no `0x0a.1`, no bare `10`), or undefined. */
function parseClient(client: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(client)) return ipaddr.IPv4.parse(client);
  return ipaddr.IPv6.isValid(client) ? ipaddr.IPv6.parse(client) : undefined;
}

function matches(client: string, ranges: AllowedRanges): boolean {
  const address = parseClient(client);
  if (!address) return false;
  let v4: ipaddr.IPv4 | undefined;
  let v6: ipaddr.IPv6 | undefined;
  if (address.kind() === 'ipv4') {
    v4 = address as ipaddr.IPv4;
    if (ranges.v6.length > 0) v6 = v4.toIPv4MappedAddress();
  } else {
    v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) v4 = v6.toIPv4Address();
  }
  if (v4 && ranges.v4.some((range) => v4.match(range))) return true;
  return v6 !== undefined && ranges.v6.some((range) => v6.match(range));
}

/** The items of `wanted` that lie inside none of `bound`'s ranges (no escalation); both canonical, `bound` not empty. */
export function rangesOutside(wanted: readonly string[], bound: readonly string[]): string[] {
  const outer = parseAllowedIps(bound);
  if (!outer) return [];
  return wanted.filter((item) => {
    const inner = parseAllowedIps([item])!;
    const [start, bits] = (inner.v4[0] ?? inner.v6[0])!;
    const candidates: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = start.kind() === 'ipv4' ? outer.v4 : outer.v6;
    return !candidates.some(([network, outerBits]) => outerBits <= bits && start.match(network, outerBits));
  });
}
