/**
 * Where webhooks may go (docs/webhooks.md, "No requests to private networks"):
 * https:// (http:// only when allowed), and only hosts whose every address is
 * global unicast (global-unicast.ts). A URL is checked when a subscription is written (its literal host)
 * and again at every attempt, after resolving its name; the attempt then
 * connects to the address that was checked, so a DNS answer that changes in
 * between cannot lead it elsewhere. WEBHOOK_ALLOWED_HOSTS names the exceptions.
 */
import dns from 'node:dns';
import ipaddr from 'ipaddr.js';
import { isGlobalUnicast } from './global-unicast.js';

export interface UrlPolicy {
  allowHttp: boolean;
  /** Lower-case host names or host:port that may be private (an internal receiver, tests). */
  allowedHosts: readonly string[];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A URL that may not be used, with the reason a person reads. */
export class UrlRefusedError extends Error {
  override name = 'UrlRefusedError';
}

const DEFAULT_PORTS: Record<string, string> = { 'https:': '443', 'http:': '80' };

/** The host as URL writes it, without the brackets of an IPv6 literal. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function isAllowedHost(url: URL, policy: UrlPolicy): boolean {
  const host = url.hostname.toLowerCase();
  const port = url.port || DEFAULT_PORTS[url.protocol];
  return policy.allowedHosts.includes(host) || policy.allowedHosts.includes(`${host}:${port}`);
}

/** Names that are loopback by definition (RFC 6761): refused without asking DNS. */
function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The checks that need no DNS: scheme, credentials, and a host that is an
 * address or a local name. WHATWG URL parsing has already turned decimal, hex
 * and octal IPv4 forms (http://2130706433/, http://0x7f.1/) into dotted quads.
 * Answers the parsed URL and whether its host is one of the allowed exceptions.
 */
export function checkUrl(raw: string, policy: UrlPolicy): { url: URL; allowed: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    throw new UrlRefusedError(policy.allowHttp ? 'must be an https:// or http:// URL' : 'must be an https:// URL');
  if (url.username || url.password)
    throw new UrlRefusedError('must not carry a user name or password (they would be logged)');
  const allowed = isAllowedHost(url, policy);
  if (allowed) return { url, allowed };
  const host = bareHost(url);
  if (ipaddr.isValid(host) && !isGlobalUnicast(host))
    throw new UrlRefusedError(`names a private, loopback or otherwise non-public address (${host})`);
  if (isLocalName(host)) throw new UrlRefusedError(`names a loopback host (${host})`);
  return { url, allowed };
}

/** How names are resolved: node's resolver, looked up at call time so a test can stand in for it. */
async function lookupAll(host: string): Promise<ResolvedAddress[]> {
  const answers = await dns.promises.lookup(host, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/**
 * The address an attempt connects to: the URL checked, its host resolved now,
 * and refused when any answer is not public (one private answer is enough for
 * a rebinding attacker to win a race). Allowed hosts are resolved unchecked.
 */
export async function resolveTarget(url: URL, policy: UrlPolicy): Promise<ResolvedAddress> {
  const { allowed } = checkUrl(url.href, policy);
  const host = bareHost(url);
  if (ipaddr.isValid(host)) return { address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 };
  let answers: ResolvedAddress[];
  try {
    answers = await lookupAll(host);
  } catch (err) {
    throw new UrlRefusedError(`host ${host} does not resolve (${(err as { code?: string }).code ?? 'error'})`);
  }
  if (answers.length === 0) throw new UrlRefusedError(`host ${host} does not resolve`);
  if (!allowed) {
    const refused = answers.find((a) => !isGlobalUnicast(a.address));
    if (refused) throw new UrlRefusedError(`host ${host} resolves to a non-public address (${refused.address})`);
  }
  return answers[0]!;
}
