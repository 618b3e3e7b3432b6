import net from 'node:net';
import type { Mode } from '../domain/api-key.js';

/**
 * Where webhooks may be sent (SSRF). A webhook URL is chosen by a client, so without these
 * checks the service would POST to its own loopback, the cloud metadata address or the
 * operator's private network on the client's behalf. Checked when an endpoint is created and
 * again on every send, against the address the name resolves to at that moment; the connection
 * then goes to exactly that address (see sender.ts), so DNS rebinding cannot swap it.
 */

export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'unique_local' | 'cgnat' | 'multicast' | 'unspecified' | 'reserved';

function v4(ranges: [string, number, AddressClass][]): [net.BlockList, AddressClass][] {
  return ranges.map(([address, prefix, kind]) => {
    const list = new net.BlockList();
    list.addSubnet(address, prefix, 'ipv4');
    return [list, kind];
  });
}

function v6(ranges: [string, number, AddressClass][]): [net.BlockList, AddressClass][] {
  return ranges.map(([address, prefix, kind]) => {
    const list = new net.BlockList();
    list.addSubnet(address, prefix, 'ipv6');
    return [list, kind];
  });
}

/** IANA special-purpose IPv4 ranges that are not reachable public unicast. */
const IPV4 = v4([
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]);

const IPV6 = v6([
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'],
  ['2001::', 23, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['fc00::', 7, 'unique_local'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'link_local'],
  ['ff00::', 8, 'multicast'],
]);

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits: judged by that address. */
const EMBEDS_V4 = v6([
  ['::ffff:0:0', 96, 'reserved'], // IPv4-mapped
  ['::', 96, 'reserved'], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96, 'reserved'], // NAT64
  ['64:ff9b:1::', 48, 'reserved'], // local-use NAT64
]);

const SIX_TO_FOUR = v6([['2002::', 16, 'reserved']]);

/** The 16 bytes of an IPv6 address (net.isIPv6 must hold). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0] as string;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = (dotted[1] as string).split('.').map(Number);
    text = `${text.slice(0, -(dotted[1] as string).length)}${(((parts[0] as number) << 8) | (parts[1] as number)).toString(16)}:${(((parts[2] as number) << 8) | (parts[3] as number)).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...(tail === undefined ? [] : Array(missing).fill('0')), ...tailGroups].map((g) => parseInt(g, 16));
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

function v4At(bytes: number[], offset: number): string {
  return bytes.slice(offset, offset + 4).join('.');
}

/** What kind of address `address` (an IP literal) is; 'reserved' for anything not an IP. */
export function classifyAddress(address: string): AddressClass {
  if (net.isIPv4(address)) return IPV4.find(([list]) => list.check(address, 'ipv4'))?.[1] ?? 'public';
  if (!net.isIPv6(address)) return 'reserved';
  const bytes = ipv6Bytes(address);
  const own = IPV6.find(([list]) => list.check(address, 'ipv6'))?.[1];
  // :: and ::1 lie inside the IPv4-compatible prefix but are themselves.
  if (own === 'unspecified' || own === 'loopback') return own;
  if (EMBEDS_V4.some(([list]) => list.check(address, 'ipv6'))) return classifyAddress(v4At(bytes, 12));
  if (own) return own;
  if (SIX_TO_FOUR.some(([list]) => list.check(address, 'ipv6'))) return classifyAddress(v4At(bytes, 2));
  return 'public';
}

export interface DestinationPolicy {
  /** WEBHOOK_ALLOW_LOOPBACK: test-mode endpoints may target loopback (development, tests). */
  allowLoopback: boolean;
  /** WEBHOOK_DNS_SERVERS: where webhook names are looked up; the system's servers when absent. */
  dnsServers?: readonly string[];
}

/** Why `address` may not be a webhook target for `mode`, or undefined when it may. */
export function refusalFor(address: string, mode: Mode, policy: DestinationPolicy): string | undefined {
  const kind = classifyAddress(address);
  if (kind === 'public') return undefined;
  if (kind === 'loopback' && mode === 'test' && policy.allowLoopback) return undefined;
  const refusal = `${address} is a ${kind.replace('_', '-')} address; webhooks are only sent to public internet addresses`;
  // A developer pointing a test endpoint at their own machine learns which setting allows it (docs/operations.md).
  if (kind === 'loopback' && mode === 'test') return `${refusal} (for development, the operator setting WEBHOOK_ALLOW_LOOPBACK=1 allows loopback for test-mode endpoints)`;
  return refusal;
}

const MAX_URL_LENGTH = 2048;
/** A code unit of a surrogate pair standing alone (the `u` flag reads a whole pair as one character). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Checks a webhook URL's form (not its address): an absolute http(s) URL, https only in live
 * mode (plain http is allowed in test mode), no credentials, no fragment. Returns the URL or
 * the reason it is refused.
 */
export function parseWebhookUrl(raw: unknown, mode: Mode): { url: URL } | { error: string } {
  if (typeof raw !== 'string' || raw.length === 0) return { error: 'url must be a non-empty string.' };
  if (raw.length > MAX_URL_LENGTH) return { error: `url must be at most ${MAX_URL_LENGTH} characters.` };
  // A lone surrogate is not Unicode: URL parsing and storage would turn it into U+FFFD, and the
  // stored url would not be the one sent (docs/api.md "Errors").
  if (LONE_SURROGATE.test(raw)) return { error: 'url must be well-formed Unicode; it holds a lone surrogate.' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'url must be an absolute URL such as https://example.com/webhooks/orders.' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { error: 'url must use https://.' };
  if (mode === 'live' && url.protocol !== 'https:') return { error: 'Live-mode webhook URLs must use https://.' };
  if (url.username || url.password) return { error: 'url must not contain a user name or password.' };
  if (url.hash) return { error: 'url must not contain a #fragment.' };
  return { url };
}

/** The host of `url` as an IP literal, or undefined for a name. */
export function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return net.isIP(host) ? host : undefined;
}

/** Names that are loopback by definition (RFC 6761), whatever a resolver says. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
