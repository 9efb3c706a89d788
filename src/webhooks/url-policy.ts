import * as ipaddr from 'ipaddr.js';
import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import type { Mode } from '../platform/mode';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/**
 * Cloud metadata services: link-local (169.254.169.254, fe80::/10), AWS's IPv6 endpoint and
 * Alibaba's 100.100.100.200. Never reachable, in either mode.
 */
function isMetadata(address: IPv4 | IPv6): boolean {
  if (address.kind() === 'ipv4') {
    return address.range() === 'linkLocal' || address.toString() === '100.100.100.200';
  }
  return address.range() === 'linkLocal' || address.toNormalizedString() === ipaddr.parse('fd00:ec2::254').toNormalizedString();
}

const v4 = (high: number, low: number) => ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]) as IPv4;

/**
 * The IPv4 addresses an IPv6 address carries and may be routed to: IPv4-mapped and
 * -translated (::ffff:0:0/96, ::ffff:0:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96,
 * 64:ff9b:1::/48), 6to4 (2002::/16: the gateway) and Teredo (2001::/32: server and client).
 */
function embeddedIPv4(address: IPv6): IPv4[] {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return [v4(p[6], p[7])];
    case '6to4':
      return [v4(p[1], p[2])];
    case 'teredo':
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  }
  if (p.slice(0, 6).every((part) => part === 0)) return [v4(p[6], p[7])];
  return [];
}

export type AddressClass = 'public' | 'internal' | 'metadata';

/**
 * public: a global unicast address. metadata: a cloud metadata service, also when wrapped in
 * an IPv6 form. internal: anything else (loopback, private, link-local, CGNAT, documentation,
 * benchmarking, multicast, reserved, the IPv4-in-IPv6 transition forms), or not an address.
 */
export function classifyAddress(text: string): AddressClass {
  if (!ipaddr.isValid(text)) return 'internal';
  const address = ipaddr.parse(text);
  const carried = address.kind() === 'ipv6' ? embeddedIPv4(address as IPv6) : [];
  if (isMetadata(address) || carried.some(isMetadata)) return 'metadata';
  if (address.range() !== 'unicast' || carried.length) return 'internal';
  return 'public';
}

/**
 * Test endpoints may reach loopback and private hosts (local development), never metadata;
 * live endpoints only public addresses (decisions section 6).
 */
export function addressAllowed(mode: Mode, address: string): boolean {
  const kind = classifyAddress(address);
  return kind === 'public' || (mode === 'test' && kind === 'internal');
}

/** The authority of an absolute URL as typed, before WHATWG parsing drops an empty userinfo. */
const AUTHORITY = /^[\x00-\x20]*[A-Za-z][A-Za-z0-9+.-]*:[\\/]*([^\\/?#]*)/;

/**
 * Syntax rules of an endpoint URL: the normalised URL to store (WHATWG serialisation), or
 * the reason it is refused.
 */
export function parseEndpointUrl(mode: Mode, raw: string): { url: URL } | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an absolute URL' };
  }
  if (url.username || url.password || AUTHORITY.exec(raw)?.[1].includes('@')) return { problem: 'must not carry credentials' };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'must use http or https' };
  if (mode === 'live' && url.protocol !== 'https:') return { problem: 'must use https in live mode' };
  return { url };
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    lookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses.map((a) => a.address)),
    ),
  );
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Checks at creation (and on a URL change) that the host resolves only to allowed
 * addresses, and returns the URL to store. A host that does not resolve now is accepted:
 * delivery checks again.
 */
export async function checkEndpointUrl(mode: Mode, raw: string): Promise<{ url: string } | { problem: string }> {
  const parsed = parseEndpointUrl(mode, raw);
  if ('problem' in parsed) return parsed;
  const host = hostOf(parsed.url);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolveAll(host);
  } catch {
    return { url: parsed.url.href };
  }
  if (!addresses.every((a) => addressAllowed(mode, a))) {
    return {
      problem: mode === 'live'
        ? 'must not reach a loopback, private, link-local, metadata, documentation or other reserved address in live mode'
        : 'must not reach a link-local or metadata address',
    };
  }
  return { url: parsed.url.href };
}

/** Why delivery to this URL's IP literal is refused, or undefined (a host name goes through guardedLookup). */
export function literalRefused(mode: Mode, url: URL): string | undefined {
  const host = hostOf(url);
  if (isIP(host) && !addressAllowed(mode, host)) return `refused to connect to ${host}: not an allowed address`;
  return undefined;
}

/**
 * A dns.lookup replacement for the delivery request: the address the socket connects to
 * is the one checked, so a host that re-resolves to a private address (DNS rebinding)
 * between creation and delivery is refused.
 */
export function guardedLookup(mode: Mode) {
  return (hostname: string, options: any, callback: (...args: any[]) => void): void => {
    lookup(hostname, { family: options?.family ?? 0, hints: options?.hints, all: true }, (error, found) => {
      if (error) return callback(error);
      const addresses = found as unknown as { address: string; family: number }[];
      const refused = addresses.find((a) => !addressAllowed(mode, a.address));
      if (refused || !addresses.length) {
        return callback(new Error(`refused to connect to ${hostname} (${refused?.address ?? 'no address'}): not an allowed address`));
      }
      if (options?.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
