import { Signature } from '@hubspot/api-client';
import { describe, expect, it } from 'vitest';
import { hubspotProvider, hubspotSignedUri, signHubspot } from '../../src/catalogue/providers/hubspot.ts';
import { codeOf, refusal, request, tamper } from './support.ts';

const SECRET = 'hubspot-client-secret-1234';
const URL = 'https://hooks.example.com/webhooks/hubspot?portal=62515';
const ITEM = {
  eventId: 100,
  subscriptionId: 2489,
  portalId: 62515,
  appId: 54321,
  occurredAt: 1733356800000,
  subscriptionType: 'contact.creation',
  attemptNumber: 0,
  objectId: 123,
  changeSource: 'CRM',
};
// An object id past 2^53, written as HubSpot would write it (a JS number literal would already be rounded).
const BATCH = JSON.stringify([
  ITEM,
  { ...ITEM, eventId: 101, objectId: 'BIG', subscriptionType: 'contact.deletion' },
]).replace('"BIG"', '9007199254740993');
const hubspot = hubspotProvider({ secrets: [SECRET], url: URL });

function headers(signature: string, timestampMs: number): Record<string, string> {
  return { 'X-HubSpot-Signature-v3': signature, 'X-HubSpot-Request-Timestamp': String(timestampMs) };
}

describe('hubspot', () => {
  it("accepts what @hubspot/api-client's Signature computes, and Signature.isValid accepts what signHubspot signs", () => {
    // The client library checks the timestamp against the real clock, so this delivery is signed now.
    const now = new Date();
    const timestamp = now.getTime();
    const sdkSignature = Signature.getSignature('POST', 'v3', {
      signature: '',
      clientSecret: SECRET,
      requestBody: BATCH,
      url: URL,
      timestamp,
    });
    const events = hubspot.verifyBatch(request(BATCH, headers(sdkSignature, timestamp)), now);
    expect(events.map((e) => [e.eventId, e.type])).toEqual([
      ['62515:2489:100:1733356800000', 'contact.creation'],
      ['62515:2489:101:1733356800000', 'contact.deletion'],
    ]);
    // Each item is stored as sent: an object id past 2^53 keeps every digit.
    expect(events[1]?.payloadText).toContain('"objectId":9007199254740993');

    const ours = signHubspot({ payload: BATCH, secret: SECRET, url: URL, timestampMs: timestamp });
    const valid = Signature.isValid({
      signatureVersion: 'v3',
      signature: ours,
      method: 'POST',
      clientSecret: SECRET,
      requestBody: BATCH,
      url: URL,
      timestamp,
    });
    expect(valid).toBe(true);
  });

  it('receive gives each item as its own event; verify refuses a batch rather than key it as one event (was one batch:<hash> event)', () => {
    const now = new Date('2026-12-05T00:00:00Z');
    const t = now.getTime();
    const one = JSON.stringify([ITEM]);
    expect(
      hubspot.verify(
        request(one, headers(signHubspot({ payload: one, secret: SECRET, url: URL, timestampMs: t }), t)),
        now,
      ),
    ).toMatchObject({
      eventId: '62515:2489:100:1733356800000',
      type: 'contact.creation',
    });
    const delivery = request(
      BATCH,
      headers(signHubspot({ payload: BATCH, secret: SECRET, url: URL, timestampMs: t }), t),
    );
    const reception = hubspot.receive(delivery, now);
    expect(reception.kind === 'events' && reception.batch).toBe(true);
    expect(reception.kind === 'events' ? reception.events.map((event) => event.eventId) : []).toEqual([
      '62515:2489:100:1733356800000',
      '62515:2489:101:1733356800000',
    ]);
    expect(codeOf(() => hubspot.verify(delivery, now))).toBe('invalid_payload');
  });

  it('signs the URL with the escapes HubSpot decodes', () => {
    expect(hubspotSignedUri('https://h.example.com/a%3Ab%2Fc?x=%40y%20z')).toBe(
      'https://h.example.com/a:b/c?x=@y%20z',
    );
  });

  it('refuses a tampered body, a wrong secret, another URL, a missing signature, a stale or future timestamp', () => {
    const now = new Date('2026-12-05T00:00:00Z');
    const t = now.getTime();
    const sign = (payload: string, secret = SECRET, url = URL, ts = t) =>
      headers(signHubspot({ payload, secret, url, timestampMs: ts }), ts);
    expect(refusal(hubspot, BATCH, sign(BATCH), now)).toBe('no error');
    expect(refusal(hubspot, tamper(BATCH), sign(BATCH), now)).toBe('invalid_signature');
    expect(refusal(hubspot, BATCH, sign(BATCH, 'other'), now)).toBe('invalid_signature');
    expect(
      refusal(hubspot, BATCH, sign(BATCH, SECRET, 'https://hooks.example.com/webhooks/hubspot'), now),
    ).toBe('invalid_signature');
    expect(refusal(hubspot, BATCH, { 'X-HubSpot-Request-Timestamp': String(t) }, now)).toBe(
      'missing_signature',
    );
    expect(refusal(hubspot, BATCH, sign(BATCH), new Date(t + 301_000))).toBe('timestamp_out_of_tolerance');
    expect(refusal(hubspot, BATCH, sign(BATCH), new Date(t - 301_000))).toBe('timestamp_out_of_tolerance');
    const keyless = JSON.stringify([{ ...ITEM, eventId: undefined }]);
    expect(refusal(hubspot, keyless, sign(keyless), now)).toBe('invalid_payload');
  });
});
