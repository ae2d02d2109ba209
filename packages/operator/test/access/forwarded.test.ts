import { describe, expect, it } from 'vitest';
import {
  NO_TRUSTED_PROXIES,
  parseTrustedProxies,
  requestOrigin,
  throttleKey,
} from '../../src/access/forwarded.ts';

const peer = (remoteAddress: string, headers: Record<string, string> = {}) => ({
  remoteAddress,
  encrypted: false,
  header: (name: string) => headers[name],
});

describe('TRUSTED_PROXIES', () => {
  it('parses addresses and CIDR ranges of both families, and names a wrong entry', () => {
    const trusted = parseTrustedProxies(' 10.0.0.0/8, 192.168.1.7 ,fd00::/8,::1');
    expect(trusted.entries).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
    for (const yes of ['10.2.3.4', '::ffff:10.2.3.4', '192.168.1.7', 'fd12::5', '::1']) {
      expect(trusted.has(yes), yes).toBe(true);
    }
    for (const no of ['11.0.0.1', '192.168.1.8', 'fe80::1', '127.0.0.1', 'garbage']) {
      expect(trusted.has(no), no).toBe(false);
    }
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/1', '::/129', '10.0.0.0/x']) {
      expect(() => parseTrustedProxies(bad), bad).toThrow(/is not an IP address or CIDR range/);
    }
  });
});

describe('requestOrigin', () => {
  const proxies = parseTrustedProxies('10.0.0.0/8');

  it('ignores forwarding headers from a peer that is not trusted', () => {
    const spoofed = peer('203.0.113.9', { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'https' });
    expect(requestOrigin(spoofed, proxies)).toEqual({ address: '203.0.113.9', scheme: 'http' });
    expect(requestOrigin(peer('10.0.0.2', { 'x-forwarded-for': '1.2.3.4' }), NO_TRUSTED_PROXIES)).toEqual({
      address: '10.0.0.2',
      scheme: 'http',
    });
  });

  it('takes the first untrusted address from the right: a client cannot append past its proxy', () => {
    const chain = peer('10.0.0.2', {
      'x-forwarded-for': '127.0.0.1, 198.51.100.4, 10.0.0.9',
      'x-forwarded-proto': 'http, https, http',
    });
    expect(requestOrigin(chain, proxies)).toEqual({ address: '198.51.100.4', scheme: 'https' });
    const single = peer('::ffff:10.0.0.2', {
      'x-forwarded-for': '[2001:db8::7]:4711',
      'x-forwarded-proto': 'HTTPS',
    });
    expect(requestOrigin(single, proxies)).toEqual({ address: '2001:db8::7', scheme: 'https' });
    // Only the scheme: the address is the socket's.
    expect(requestOrigin(peer('10.0.0.2', { 'x-forwarded-proto': 'https' }), proxies)).toEqual({
      address: '10.0.0.2',
      scheme: 'https',
    });
  });

  it('reads Forwarded only without X-Forwarded-For', () => {
    const forwarded = peer('10.0.0.2', { forwarded: 'for=198.51.100.4;proto=https, for="[2001:db8::1]:80"' });
    expect(requestOrigin(forwarded, proxies)).toEqual({ address: '2001:db8::1', scheme: 'http' });
    const both = peer('10.0.0.2', {
      forwarded: 'for=127.0.0.1;proto=https',
      'x-forwarded-for': '198.51.100.4',
    });
    expect(requestOrigin(both, proxies)).toEqual({ address: '198.51.100.4', scheme: 'http' });
    const unknown = peer('10.0.0.2', { forwarded: 'for=unknown;proto=https' });
    expect(requestOrigin(unknown, proxies)).toEqual({ address: '10.0.0.2', scheme: 'https' });
  });
});

describe('throttleKey', () => {
  it('groups IPv6 by /64 and every loopback address as one', () => {
    expect(throttleKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(throttleKey('::ffff:198.51.100.4')).toBe('198.51.100.4');
    for (const loopback of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) {
      expect(throttleKey(loopback), loopback).toBe('loopback');
    }
    expect(throttleKey(null)).toBe('unknown');
  });
});
