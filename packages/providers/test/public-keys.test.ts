import { generateKeyPairSync, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import { discordProvider, signDiscord } from '../src/catalogue/providers/discord.ts';
import { sendgridProvider } from '../src/catalogue/providers/sendgrid.ts';
import { selfSignedCertificate } from '@webhook-inbox/testing';
import { keyWeakness } from '../src/public-keys.ts';
import { createProviders } from '../src/registry.ts';
import type { SourceDefinition } from '../src/sources.ts';
import { codeOf, request } from './catalogue/support.ts';

// Every public key a source verifies with is judged when it is configured (public-keys.ts). The small-order
// encodings below are libsodium's blocklist (ed25519_ref10.c, ge25519_has_small_order), each with either sign bit:
// the 8 points of order 1, 2, 4 and 8, and the non-canonical encodings of 0 and 1 (y = p, y = p + 1).

const SMALL_ORDER_Y = [
  '0000000000000000000000000000000000000000000000000000000000000000', // order 4 (the all-zero key)
  '0100000000000000000000000000000000000000000000000000000000000000', // order 1 (the identity)
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', // order 8
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // p - 1, order 2
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // p, non-canonical 0
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // p + 1, non-canonical 1
];
const SMALL_ORDER_KEYS = SMALL_ORDER_Y.flatMap((y) => {
  const negative = Buffer.from(y, 'hex');
  negative[31] = negative[31]! | 0x80;
  return [y, negative.toString('hex')];
});
const ZERO_KEY = '00'.repeat(32);
/** R = the identity point, S = 0: the forgery that verifies under a small-order key for some messages. */
const FORGED = `01${'00'.repeat(31)}${'00'.repeat(32)}`;
const NOW = new Date();
const T = Math.floor(NOW.getTime() / 1000);
const BODY = '{"id":"1316523482392510514","type":2}';

const rawHex = (key: KeyObject) => key.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
const discordSource = (secret: string): SourceDefinition => ({
  name: 'discord-bot',
  type: 'discord',
  secrets: [secret],
  secretFiles: [],
});
const ed25519Source = (secret: string): SourceDefinition => ({
  name: 'signed-forms',
  type: 'ed25519',
  secrets: ['a'.repeat(64), secret],
  secretFiles: [],
  ed25519: { signatureHeader: 'X-Signature-Ed25519', timestampHeader: 'X-Signature-Timestamp' },
  eventKey: { pointer: '/id' },
  eventType: { constant: 'form' },
});
const startUp = (source: SourceDefinition) => () =>
  createProviders({ sources: [source], toleranceSeconds: 300 });

describe('Ed25519 keys of small order', () => {
  it('the attack: under the all-zero key, R = identity and S = 0 verifies for about 1 timestamp in 4 (node:crypto and discord-interactions agree)', async () => {
    const zero = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.alloc(32)]);
    const forgedBy = (timestamp: number) =>
      verify(
        null,
        Buffer.from(`${timestamp}${BODY}`),
        { key: zero, format: 'der', type: 'spki' },
        Buffer.from(FORGED, 'hex'),
      );
    let timestamp = T;
    while (!forgedBy(timestamp)) timestamp -= 1;
    expect(await verifyKey(BODY, FORGED, String(timestamp), ZERO_KEY)).toBe(true);
  });

  it('refused at start-up (was accepted before): every small-order encoding, as a discord or an ed25519 source, naming the source and the secret', () => {
    for (const key of SMALL_ORDER_KEYS) {
      expect(startUp(discordSource(key)), key).toThrow(
        /^source "discord-bot": secret #1 is (a point of small order|not a canonical encoding)/,
      );
      expect(startUp(ed25519Source(key)), key).toThrow(
        /^source "signed-forms": secret #2 is (a point of small order|not a canonical encoding)/,
      );
    }
    expect(startUp(discordSource(ZERO_KEY))).toThrow(/anyone could sign for it/);
    // 32 bytes that are no point of the curve (y = 2 has no x).
    expect(startUp(discordSource(`02${'00'.repeat(31)}`))).toThrow(/secret #1 is not a point of the curve/);
  });

  it('accepts generated keys, and refuses the forgery at request time under a real key', () => {
    for (let i = 0; i < 50; i += 1) {
      expect(keyWeakness(generateKeyPairSync('ed25519').publicKey, { type: 'ed25519' })).toBeUndefined();
    }
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const discord = discordProvider({ secrets: [rawHex(publicKey)] });
    const headers = (signature: string, timestamp = T) => ({
      'x-signature-ed25519': signature,
      'x-signature-timestamp': String(timestamp),
    });
    for (let timestamp = T; timestamp > T - 16; timestamp -= 1) {
      expect(codeOf(() => discord.verify(request(BODY, headers(FORGED, timestamp)), NOW))).toBe(
        'invalid_signature',
      );
    }
    const good = signDiscord({ payload: BODY, privateKey, timestamp: T });
    expect(codeOf(() => discord.verify(request(BODY, headers(good)), NOW))).toBe('no error');
  });
});

describe('ECDSA and RSA keys', () => {
  const spki = (key: KeyObject) => key.export({ format: 'der', type: 'spki' }).toString('base64');
  const sendgridSource = (secret: string): SourceDefinition => ({
    name: 'mail-events',
    type: 'sendgrid',
    secrets: [secret],
    secretFiles: [],
  });

  it('refused at start-up (P-384 and secp256k1 were accepted before): a SendGrid key not on P-256, naming the source', () => {
    const weak: [string, KeyObject][] = [
      ['secp384r1', generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey],
      ['secp256k1', generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey],
      ['rsa', generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey],
      ['ed25519', generateKeyPairSync('ed25519').publicKey],
      ['dsa', generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 }).publicKey],
    ];
    for (const [kind, key] of weak) {
      expect(startUp(sendgridSource(spki(key))), kind).toThrow(/^source "mail-events": secret #1 is /);
    }
    expect(startUp(sendgridSource('bm90IGEga2V5'))).toThrow(
      /^source "mail-events": secret #1 is not a base64 SPKI public key/,
    );
    const good = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
    expect(() => sendgridProvider({ secrets: [spki(good)] })).not.toThrow();
  });

  it('judges RSA by its modulus: under 2048 bits refused (a certificate of it is certificate_invalid, certificates.test.ts)', () => {
    const short = new X509Certificate(selfSignedCertificate('weak', [], 1024).certificate).publicKey;
    expect(keyWeakness(short, { type: 'rsa', minBits: 2048 })).toBe('is RSA of 1024 bits, under 2048');
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(keyWeakness(publicKey, { type: 'rsa', minBits: 2048 })).toBeUndefined();
  });
});
