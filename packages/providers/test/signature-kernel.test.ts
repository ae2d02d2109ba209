import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacKey } from '../src/shared.ts';
import { anyKeyMatches, decodeSignature, hmacOf } from '../src/signature-kernel.ts';

// A SHA-256 digest is 32 bytes: 44 base64 characters ending in one '=', 43 in base64url.
const DIGEST = createHmac('sha256', 'secret').update('body').digest();
const BASE64 = DIGEST.toString('base64');
const BASE64URL = DIGEST.toString('base64url');
const UNPADDED = BASE64.replace(/=+$/, '');

describe('decodeSignature', () => {
  it('reads hex of the exact length, either case, under both padding rules', () => {
    for (const padding of ['canonical', 'optional'] as const) {
      expect(decodeSignature(DIGEST.toString('hex'), 'hex', 32, padding)).toEqual(DIGEST);
      expect(decodeSignature(DIGEST.toString('hex').toUpperCase(), 'hex', 32, padding)).toEqual(DIGEST);
      expect(decodeSignature(DIGEST.toString('hex').slice(2), 'hex', 32, padding)).toBeUndefined();
      expect(decodeSignature(`${DIGEST.toString('hex').slice(2)}zz`, 'hex', 32, padding)).toBeUndefined();
    }
  });

  describe('canonical padding (the catalogue)', () => {
    it('accepts base64 padded as Node writes it', () => {
      expect(BASE64.endsWith('=')).toBe(true);
      expect(decodeSignature(BASE64, 'base64', 32, 'canonical')).toEqual(DIGEST);
    });
    it('refuses base64 without its padding, or with more', () => {
      expect(decodeSignature(UNPADDED, 'base64', 32, 'canonical')).toBeUndefined();
      expect(decodeSignature(`${BASE64}=`, 'base64', 32, 'canonical')).toBeUndefined();
    });
    it('accepts base64url unpadded, and refuses it padded', () => {
      expect(decodeSignature(BASE64URL, 'base64url', 32, 'canonical')).toEqual(DIGEST);
      expect(decodeSignature(`${BASE64URL}=`, 'base64url', 32, 'canonical')).toBeUndefined();
    });
  });

  describe('optional padding (the hmac template)', () => {
    it('accepts base64 with or without its padding, and with extra "="', () => {
      expect(decodeSignature(BASE64, 'base64', 32, 'optional')).toEqual(DIGEST);
      expect(decodeSignature(UNPADDED, 'base64', 32, 'optional')).toEqual(DIGEST);
      expect(decodeSignature(`${BASE64}=`, 'base64', 32, 'optional')).toEqual(DIGEST);
    });
    it('accepts base64url with or without padding', () => {
      expect(decodeSignature(BASE64URL, 'base64url', 32, 'optional')).toEqual(DIGEST);
      expect(decodeSignature(`${BASE64URL}=`, 'base64url', 32, 'optional')).toEqual(DIGEST);
    });
  });

  it('refuses under both rules: padding bits not zero, the other alphabet, stray characters, the wrong length', () => {
    // The last character before '=' carries 2 padding bits: a different letter with the same 4 data bits
    // decodes to the same bytes, and is refused so that one signature has one spelling.
    const last = BASE64.at(-2) ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const sibling = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)] ?? '';
    const loose = `${BASE64.slice(0, -2)}${sibling}=`;
    expect(Buffer.from(loose, 'base64')).toEqual(DIGEST);
    const urlOnly = BASE64.includes('+') || BASE64.includes('/') ? BASE64URL : undefined;
    for (const padding of ['canonical', 'optional'] as const) {
      expect(decodeSignature(loose, 'base64', 32, padding)).toBeUndefined();
      expect(
        decodeSignature(`${BASE64.slice(0, 10)}!${BASE64.slice(11)}`, 'base64', 32, padding),
      ).toBeUndefined();
      expect(decodeSignature(BASE64, 'base64', 20, padding)).toBeUndefined();
      expect(decodeSignature('', 'base64', 32, padding)).toBeUndefined();
      if (urlOnly) expect(decodeSignature(urlOnly, 'base64', 32, padding)).toBeUndefined();
    }
  });
});

describe('anyKeyMatches', () => {
  const keys = [hmacKey('old'), hmacKey('secret')];
  const expected = (key: Parameters<typeof hmacOf>[1]) => hmacOf('sha256', key, ['bo', Buffer.from('dy')]);

  it('matches when any key signs like any presented signature (the parts hashed in order)', () => {
    expect(anyKeyMatches(keys, [Buffer.alloc(32), DIGEST], expected)).toBe(true);
  });
  it('does not match without signatures, or when no key signs so', () => {
    expect(anyKeyMatches(keys, [], expected)).toBe(false);
    expect(anyKeyMatches([hmacKey('other')], [DIGEST], expected)).toBe(false);
  });
});
