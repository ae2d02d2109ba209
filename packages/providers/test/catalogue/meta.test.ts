import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { metaProvider, signMeta } from '../../src/catalogue/providers/meta.ts';
import type { SignedRequest } from '../../src/types.ts';
import { codeOf, refusal, request, tamper, without } from './support.ts';

// Meta publishes no verification library on npm; its documented recipe ("Validate payloads": sha256= and the hex
// HMAC-SHA256 of the raw body under the App Secret) is written out here independently of the provider.
const SECRET = 'meta-app-secret';
const TOKEN = 'meatyhamhock';
const NOW = new Date('2026-12-05T00:00:00Z');
const change = (id: string) => ({
  field: 'messages',
  value: { messages: [{ id, type: 'text', text: { body: 'hi' } }] },
});
const BODY = JSON.stringify({
  object: 'whatsapp_business_account',
  entry: [
    { id: '102290129340398', changes: [change('wamid.A'), change('wamid.B')] },
    {
      id: '17841405822304914',
      time: 1764892800,
      messaging: [{ sender: { id: '1' }, recipient: { id: '2' }, timestamp: 1, message: { mid: 'm.1' } }],
    },
  ],
});
const meta = metaProvider({ secrets: [SECRET], verifyToken: TOKEN });
const signed = (body: string) =>
  request(body, { 'x-hub-signature-256': signMeta({ payload: body, secret: SECRET }) });
const get = (query: string): SignedRequest => ({
  rawBody: new Uint8Array(0),
  header: () => null,
  method: 'GET',
  url: `/webhooks/meta?${query}`,
});

describe('meta', () => {
  it("signs as Meta's documented recipe does", () => {
    const hex = createHmac('sha256', SECRET).update(BODY).digest('hex');
    expect(signMeta({ payload: BODY, secret: SECRET })).toBe(`sha256=${hex}`);
  });

  it('records one event per entry item, keyed by entry id and item hash, typed by object and field or kind', () => {
    const reception = meta.receive?.(signed(BODY), NOW);
    expect(reception?.kind === 'events' && reception.batch).toBe(true);
    const events = reception?.kind === 'events' ? reception.events : [];
    const hash = (item: unknown) => createHash('sha256').update(JSON.stringify(item)).digest('hex');
    expect(events.map((event) => [event.eventId, event.type])).toEqual([
      [`102290129340398:${hash(change('wamid.A'))}`, 'whatsapp_business_account.messages'],
      [`102290129340398:${hash(change('wamid.B'))}`, 'whatsapp_business_account.messages'],
      [
        expect.stringMatching(/^17841405822304914:[0-9a-f]{64}$/) as unknown,
        'whatsapp_business_account.message',
      ],
    ]);
    expect(JSON.parse(events[0]!.payloadText)).toEqual({
      object: 'whatsapp_business_account',
      entry: { id: '102290129340398', item: change('wamid.A') },
    });
    // A batch is never one event: verify, which answers one, refuses it (was one `batch` event keyed by a hash).
    expect(codeOf(() => meta.verify(signed(BODY), NOW))).toBe('invalid_payload');
  });

  it('answers the GET subscription with hub.challenge only for the configured verify token', () => {
    expect(meta.acceptsGet).toBe(true);
    expect(
      meta.receive?.(get(`hub.mode=subscribe&hub.verify_token=${TOKEN}&hub.challenge=1158201444`), NOW),
    ).toEqual({
      kind: 'handshake',
      handshake: 'meta',
      answer: { status: 200, contentType: 'text/plain; charset=utf-8', body: '1158201444' },
    });
    expect(
      codeOf(() => meta.receive?.(get('hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1'), NOW)),
    ).toBe('invalid_signature');
    expect(codeOf(() => meta.receive?.(get('hub.mode=subscribe&hub.challenge=1'), NOW))).toBe(
      'missing_signature',
    );
    expect(
      codeOf(() =>
        meta.receive?.(get(`hub.mode=unsubscribe&hub.verify_token=${TOKEN}&hub.challenge=1`), NOW),
      ),
    ).toBe('invalid_payload');
  });

  it('refuses a tampered body, a wrong secret, a missing signature, an empty entry[]', () => {
    const good = { 'x-hub-signature-256': signMeta({ payload: BODY, secret: SECRET }) };
    expect(refusal(meta, tamper(BODY), good, NOW)).toBe('invalid_signature');
    expect(
      refusal(meta, BODY, { 'x-hub-signature-256': signMeta({ payload: BODY, secret: 'x' }) }, NOW),
    ).toBe('invalid_signature');
    expect(refusal(meta, BODY, without(good, 'x-hub-signature-256'), NOW)).toBe('missing_signature');
    expect(codeOf(() => meta.verify(signed('{"object":"page","entry":[]}'), NOW))).toBe('invalid_payload');
  });

  it('refuses at start-up a source without its verify token', () => {
    expect(() => metaProvider({ secrets: [SECRET], verifyToken: '' })).toThrow(TypeError);
  });
});
