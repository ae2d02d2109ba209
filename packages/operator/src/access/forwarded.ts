import net from 'node:net';

/**
 * Who sent a request and over which scheme, from the socket, and from the forwarding headers only when the peer
 * is a trusted proxy (`TRUSTED_PROXIES`). Anyone can send `X-Forwarded-For: 127.0.0.1`: read from an untrusted
 * peer, it would let a client pick the address it is throttled and logged as.
 */

/** The proxies whose forwarding headers are believed: addresses and CIDR ranges, IPv4 and IPv6. */
export interface TrustedProxies {
  /** True when `address` (as a socket reports it) is one of them. */
  has(address: string): boolean;
  /** The entries as given, for the configuration's log line. */
  readonly entries: readonly string[];
}

/**
 * Parses a comma-separated list of addresses and CIDR ranges (`10.0.0.0/8, 192.168.1.7, fd00::/8`); an empty
 * list trusts no one. Throws a `TypeError` naming the first entry that is neither.
 */
export function parseTrustedProxies(list: string): TrustedProxies {
  const blocks = new net.BlockList();
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = net.isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (
      family === 0 ||
      extra !== undefined ||
      (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) ||
      bits > (family === 6 ? 128 : 32)
    ) {
      throw new TypeError(`"${entry.slice(0, 60)}" is not an IP address or CIDR range (e.g. 10.0.0.0/8)`);
    }
    blocks.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    entries,
    has(address) {
      const normal = normalizeAddress(address);
      const family = normal ? net.isIP(normal) : 0;
      return family !== 0 && blocks.check(normal!, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

/** Trusts no one: forwarding headers are ignored. */
export const NO_TRUSTED_PROXIES: TrustedProxies = parseTrustedProxies('');

export interface RequestPeer {
  /** The socket's remote address; undefined without a socket (an in-process request). */
  remoteAddress: string | undefined;
  /** True on a TLS socket. */
  encrypted: boolean;
  /** A request header by lower-case name, several values joined with `, `. */
  header(name: string): string | undefined;
}

export interface RequestOrigin {
  /** The client's address (IPv4-mapped IPv6 written as IPv4), or null when unknown. */
  address: string | null;
  scheme: 'http' | 'https';
}

/**
 * The client's address and scheme. From a trusted peer, `X-Forwarded-For` is read right to left, skipping trusted
 * proxies: the first untrusted address is the client (a client can prepend anything, but not append past its
 * proxy). `X-Forwarded-Proto` gives the scheme that client used (the entry at the same position when the proxies
 * append to both, else the last). `Forwarded` (RFC 7239) is read the same way, only when `X-Forwarded-For` is
 * absent: most proxies set `X-Forwarded-For` and pass a client's `Forwarded` through untouched.
 */
export function requestOrigin(peer: RequestPeer, trusted: TrustedProxies): RequestOrigin {
  const socketAddress = peer.remoteAddress === undefined ? null : normalizeAddress(peer.remoteAddress);
  const socketScheme = peer.encrypted ? 'https' : 'http';
  if (socketAddress === null || !trusted.has(socketAddress)) {
    return { address: socketAddress, scheme: socketScheme };
  }
  const forwardedFor = peer.header('x-forwarded-for');
  const forwarded = peer.header('forwarded');
  const forwardedProto = peer.header('x-forwarded-proto');
  // A proxy that sets only the scheme (its peer's address is the socket's).
  if (forwardedFor === undefined && forwarded === undefined) {
    return { address: socketAddress, scheme: schemeOf(list(forwardedProto ?? '').at(-1)) ?? socketScheme };
  }
  const hops =
    forwardedFor !== undefined
      ? fromXForwarded(forwardedFor, forwardedProto)
      : fromForwarded(forwarded ?? '');
  let address = socketAddress;
  let scheme = hops.length > 0 ? hops[hops.length - 1]!.scheme : undefined;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    // A hop a trusted proxy wrote but that is not an address: the client is the last one known.
    if (hop.address === null) break;
    address = hop.address;
    scheme = hop.scheme;
    if (!trusted.has(hop.address)) break;
  }
  return { address, scheme: scheme ?? socketScheme };
}

interface Hop {
  address: string | null;
  scheme: 'http' | 'https' | undefined;
}

function fromXForwarded(forwardedFor: string, forwardedProto: string | undefined): Hop[] {
  const addresses = list(forwardedFor);
  const schemes = list(forwardedProto ?? '').map(schemeOf);
  const aligned = schemes.length === addresses.length;
  return addresses.map((entry, i) => ({
    address: normalizeAddress(entry),
    scheme: aligned ? schemes[i] : schemes[schemes.length - 1],
  }));
}

function fromForwarded(forwarded: string): Hop[] {
  return list(forwarded).map((element) => {
    const pairs = new Map(
      element.split(';').map((pair) => {
        const at = pair.indexOf('=');
        const value = pair.slice(at + 1).trim();
        return [pair.slice(0, at).trim().toLowerCase(), value.replace(/^"(.*)"$/, '$1')] as const;
      }),
    );
    const node = pairs.get('for');
    return {
      address: node === undefined ? null : normalizeAddress(node),
      scheme: schemeOf(pairs.get('proto')),
    };
  });
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

function schemeOf(value: string | undefined): 'http' | 'https' | undefined {
  const scheme = value?.trim().toLowerCase();
  return scheme === 'http' || scheme === 'https' ? scheme : undefined;
}

/**
 * An address as a header or socket writes it (`1.2.3.4:5678`, `[2001:db8::1]:443`, `::ffff:10.0.0.1`,
 * `fe80::1%eth0`) as a plain IP address, or null when it is none (`unknown`, `_hidden`).
 */
export function normalizeAddress(value: string): string | null {
  let address = value.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  address = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1]!;
  return net.isIP(address) === 0 ? null : address.toLowerCase();
}

/**
 * The key a client is throttled under: its IPv4 address, its IPv6 /64 (one subscriber's network: the rest of the
 * address is free for it to pick), `loopback` for every loopback address (127.0.0.0/8 and ::1), `unknown` without
 * an address.
 */
export function throttleKey(address: string | null): string {
  const normal = address === null ? null : normalizeAddress(address);
  if (normal === null) return 'unknown';
  if (net.isIP(normal) === 4) return normal.startsWith('127.') ? 'loopback' : normal;
  const groups = expandIPv6(normal);
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return 'loopback';
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (one that `net.isIP` accepted). */
function expandIPv6(address: string): number[] {
  let text = address;
  const ipv4Tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (ipv4Tail) {
    const [a, b, c, d] = ipv4Tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, ipv4Tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16));
}
