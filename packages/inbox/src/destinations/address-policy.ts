/**
 * Which addresses a destination may reach. Private, loopback, link-local (cloud metadata at 169.254.169.254),
 * shared (CGNAT), multicast, reserved and unspecified addresses are refused unless the destination allows private
 * networks: a URL in a destinations file is often typed by someone else, and a request from the worker to its
 * own network is a request with the worker's reach.
 *
 * The check runs on the addresses DNS answered, in the connection's own lookup (`guardedLookup`), so the address
 * checked is the one connected to: a name that resolves to a public address when checked and to a private one when
 * connecting (DNS rebinding) is checked on the connecting answer.
 */
import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { CodedError } from '../errors.ts';

const RESTRICTED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  RESTRICTED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  RESTRICTED.addSubnet(network, prefix, 'ipv6');
}

/** A destination's address that its configuration does not allow it to reach. */
export class RestrictedAddressError extends CodedError<'restricted_address'> {
  override name = 'RestrictedAddressError';
  constructor(host: string, address: string) {
    super(
      'restricted_address',
      `${host} resolves to ${address}, a private, loopback or link-local address: refused (set ` +
        'allowPrivateNetwork: true on the destination to reach it)',
    );
  }
}

/** True for an address a destination reaches only with `allowPrivateNetwork`. */
export function isRestrictedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return RESTRICTED.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1, ::ffff:a00:1) is its IPv4 address.
  const mapped = /^::ffff:(.+)$/i.exec(address)?.[1];
  if (mapped) {
    if (isIP(mapped) === 4) return RESTRICTED.check(mapped, 'ipv4');
    const [high = '0', low = '0'] = mapped.split(':');
    const value = (parseInt(high, 16) << 16) | parseInt(low, 16);
    const v4 = [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
    return RESTRICTED.check(v4, 'ipv4');
  }
  return RESTRICTED.check(address, 'ipv6');
}

/** Refuses a URL whose host is a restricted address literal (a literal never reaches the lookup). */
export function checkLiteralHost(hostname: string): void {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && isRestrictedAddress(host)) throw new RestrictedAddressError(host, host);
}

/** `dns.lookup`, failing with `RestrictedAddressError` when any address it answered is restricted. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '', 0);
      return;
    }
    const refused = addresses.find((entry) => isRestrictedAddress(entry.address));
    if (refused) {
      callback(new RestrictedAddressError(hostname, refused.address), '', 0);
      return;
    }
    if (options.all) {
      (callback as unknown as (e: null, all: dns.LookupAddress[]) => void)(null, addresses);
      return;
    }
    const [first] = addresses;
    if (!first) callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '', 0);
    else callback(null, first.address, first.family);
  });
};
