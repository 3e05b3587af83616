/**
 * Which addresses a webhook may reach: global unicast only, written as an
 * allow-list (docs/webhooks.md, "No requests to private networks"). ipaddr.js's
 * own `range()` calls `unicast` whatever it has no name for, which let
 * IPv4-compatible IPv6 (`::127.0.0.1`) through; so the ranges are listed here
 * as data, from the IANA registries:
 * - IPv4 Special-Purpose Address Registry (RFC 6890),
 *   https://www.iana.org/assignments/iana-ipv4-special-registry/
 * - IPv4 Multicast Address Space Registry,
 *   https://www.iana.org/assignments/multicast-addresses/
 * - IPv6 Address Space (global unicast is 2000::/3, RFC 4291), and the IPv6
 *   Special-Purpose Address Registry,
 *   https://www.iana.org/assignments/ipv6-address-space/ and
 *   https://www.iana.org/assignments/iana-ipv6-special-registry/
 * Every range of the special-purpose registries is refused, including those
 * the registry marks globally reachable (AS112, AMT, anycast services): no
 * webhook receiver lives there.
 */
import ipaddr from 'ipaddr.js';

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The IPv6 global unicast space; everything outside it (::/96, ::ffff:0:0/96, 64:ff9b::/96, 100::/64, fc00::/7, fe80::/10, ff00::/8...) is refused. */
const IPV6_GLOBAL_UNICAST = '2000::/3';

/** Special-purpose ranges, refused wherever they lie: the registries' entries, by their names there. */
const SPECIAL_PURPOSE: Readonly<Record<string, string>> = {
  // IPv4 Special-Purpose Address Registry
  '0.0.0.0/8': '"This network"',
  '10.0.0.0/8': 'Private-Use',
  '100.64.0.0/10': 'Shared Address Space',
  '127.0.0.0/8': 'Loopback',
  '169.254.0.0/16': 'Link Local',
  '172.16.0.0/12': 'Private-Use',
  '192.0.0.0/24': 'IETF Protocol Assignments (DS-Lite, NAT64 discovery, PCP and TURN anycast...)',
  '192.0.2.0/24': 'Documentation (TEST-NET-1)',
  '192.31.196.0/24': 'AS112-v4',
  '192.52.193.0/24': 'AMT',
  '192.88.99.0/24': 'Deprecated (6to4 Relay Anycast)',
  '192.168.0.0/16': 'Private-Use',
  '192.175.48.0/24': 'Direct Delegation AS112 Service',
  '198.18.0.0/15': 'Benchmarking',
  '198.51.100.0/24': 'Documentation (TEST-NET-2)',
  '203.0.113.0/24': 'Documentation (TEST-NET-3)',
  '240.0.0.0/4': 'Reserved',
  '255.255.255.255/32': 'Limited Broadcast',
  // IPv4 Multicast Address Space Registry
  '224.0.0.0/4': 'Multicast',
  // IPv6 Special-Purpose Address Registry (those outside 2000::/3 are refused by it already, listed for the record)
  '::/128': 'Unspecified Address',
  '::1/128': 'Loopback Address',
  '::ffff:0:0/96': 'IPv4-mapped Address',
  '64:ff9b::/96': 'IPv4-IPv6 Translat. (NAT64)',
  '64:ff9b:1::/48': 'IPv4-IPv6 Translat. (local-use NAT64)',
  '100::/64': 'Discard-Only Address Block',
  '100:0:0:1::/64': 'Dummy IPv6 Prefix',
  '2001::/23': 'IETF Protocol Assignments',
  '2001::/32': 'TEREDO',
  '2001:2::/48': 'Benchmarking',
  '2001:3::/32': 'AMT',
  '2001:4:112::/48': 'AS112-v6',
  '2001:10::/28': 'Deprecated (previously ORCHID)',
  '2001:20::/28': 'ORCHIDv2',
  '2001:30::/28': 'Drone Remote ID Protocol Entity Tags (DETs) Prefix',
  '2001:db8::/32': 'Documentation',
  '2002::/16': '6to4',
  '2620:4f:8000::/48': 'Direct Delegation AS112 Service',
  '3fff::/20': 'Documentation',
  '5f00::/16': 'Segment Routing (SRv6) SIDs',
  'fc00::/7': 'Unique-Local',
  'fe80::/10': 'Link-Local Unicast',
};

const globalV6 = ipaddr.parseCIDR(IPV6_GLOBAL_UNICAST) as Cidr;
const special = Object.keys(SPECIAL_PURPOSE).map((cidr) => ipaddr.parseCIDR(cidr) as Cidr);

/**
 * Whether `address` is a global unicast address: IPv4 outside every
 * special-purpose and multicast range; IPv6 inside 2000::/3 and outside every
 * special-purpose range. IPv4-compatible, IPv4-mapped and NAT64 forms are IPv6
 * outside 2000::/3, so none of them is judged by the IPv4 address it carries.
 */
export function isGlobalUnicast(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && !ip.match(globalV6)) return false;
  return !special.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
}
