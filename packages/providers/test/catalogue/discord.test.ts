import { generateKeyPairSync } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { describe, expect, it } from 'vitest';
import { discordProvider, signDiscord } from '../../src/catalogue/providers/discord.ts';
import { codeOf, expectKeyPairForgeriesRefused, request, tamper, verifiedEvent } from './support.ts';

// Discord publishes discord-interactions, which verifies (verifyKey) but does not sign: the tests sign with an
// Ed25519 key of their own, as Discord does with the application's, and both verifiers must agree.
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const rawKey = (key: typeof publicKey) =>
  key.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
const PUBLIC_HEX = rawKey(publicKey);
const NOW = new Date('2026-12-05T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const BODY = JSON.stringify({
  id: '1316523482392510514',
  application_id: '1316523482392510000',
  type: 2,
  token: 'aW50ZXJhY3Rpb246MTMxNjUyMzQ4MjM5MjUxMDUxNA',
  version: 1,
  data: { id: '1316523482392510001', name: 'ping', type: 1 },
});
const discord = discordProvider({ secrets: [PUBLIC_HEX] });
const headers = (signature: string, timestamp = T) => ({
  'X-Signature-Ed25519': signature,
  'X-Signature-Timestamp': String(timestamp),
});

describe('discord', () => {
  it("discord-interactions' verifyKey accepts what signDiscord signs, and refuses it for another key or body", async () => {
    const signature = signDiscord({ payload: BODY, privateKey, timestamp: T });
    expect(await verifyKey(BODY, signature, String(T), PUBLIC_HEX)).toBe(true);
    expect(await verifyKey(tamper(BODY), signature, String(T), PUBLIC_HEX)).toBe(false);
    expect(await verifyKey(BODY, signature, String(T), rawKey(other.publicKey))).toBe(false);
  });

  it('accepts a signed interaction, keyed by its id and typed by name', () => {
    const event = discord.verify(
      request(BODY, headers(signDiscord({ payload: BODY, privateKey, timestamp: T }))),
      NOW,
    );
    expect(event).toEqual(
      verifiedEvent('discord', BODY, { eventId: '1316523482392510514', type: 'APPLICATION_COMMAND' }),
    );
    const ping = '{"id":"1","type":1}';
    expect(
      discord.verify(request(ping, headers(signDiscord({ payload: ping, privateKey, timestamp: T }))), NOW)
        .type,
    ).toBe('PING');
  });

  it('refuses a tampered body, another key, a moved timestamp, a missing or malformed signature, a stale one', () => {
    expectKeyPairForgeriesRefused({
      provider: discord,
      sign: signDiscord,
      privateKey,
      otherPrivateKey: other.privateKey,
      body: BODY,
      signatureHeader: 'x-signature-ed25519',
      timestampHeader: 'x-signature-timestamp',
      unsigned: '00'.repeat(64),
      now: NOW,
    });
  });

  it('refuses at start-up a key that is not 32 bytes of hex', () => {
    expect(() => discordProvider({ secrets: ['s3cret'] })).toThrow(TypeError);
  });
});

describe('discord as a source (receive)', () => {
  const signed = (body: string) =>
    request(body, headers(signDiscord({ payload: body, privateKey, timestamp: T })));

  it('answers a signed PING {"type":1} without recording it, and requires 401 for signature refusals', () => {
    const ping = '{"id":"1316523482392510515","application_id":"1","type":1,"version":1}';
    expect(discord.receive?.(signed(ping), NOW)).toEqual({
      kind: 'handshake',
      handshake: 'discord',
      answer: { status: 200, contentType: 'application/json', body: '{"type":1}' },
    });
    expect(discord.signatureRefusalStatus).toBe(401);
  });

  it('records any other interaction as one event', () => {
    const reception = discord.receive?.(signed(BODY), NOW);
    expect(reception?.kind === 'events' && reception.events.map((event) => event.eventId)).toEqual([
      '1316523482392510514',
    ]);
  });

  it('refuses a PING signed by another key (the check Discord makes when the URL is saved)', () => {
    const ping = '{"id":"2","type":1}';
    const forged = request(
      ping,
      headers(signDiscord({ payload: ping, privateKey: other.privateKey, timestamp: T })),
    );
    expect(codeOf(() => discord.receive?.(forged, NOW))).toBe('invalid_signature');
  });
});
