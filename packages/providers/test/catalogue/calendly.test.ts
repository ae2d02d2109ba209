import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { calendlyProvider, signCalendly } from '../../src/catalogue/providers/calendly.ts';
import { expectForgeriesRefused, refusal, request, verifiedEvent } from './support.ts';

// Calendly publishes no verification library or test vector; the reference is its documented recipe:
// https://developer.calendly.com/api-docs/overview/webhooks/webhook-signatures
const KEY = 'calendly-signing-key';
const NOW = new Date('2026-12-05T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const INVITEE = 'https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2/invitees/AAAAAAAAAAAAAAAA';
const BODY = JSON.stringify({
  created_at: '2026-12-04T23:59:59.000000Z',
  created_by: 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA',
  event: 'invitee.created',
  payload: { uri: INVITEE, email: 'test@example.com', status: 'active' },
});
const calendly = calendlyProvider({ secrets: [KEY] });
const headers = (signature: string) => ({ 'Calendly-Webhook-Signature': signature });

describe('calendly', () => {
  it('signs as Calendly documents it: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">', () => {
    const v1 = createHmac('sha256', KEY).update(`${T}.${BODY}`).digest('hex');
    expect(signCalendly({ payload: BODY, secret: KEY, timestamp: T })).toBe(`t=${T},v1=${v1}`);
  });

  it('accepts a signed delivery, keyed by the event and the invitee', () => {
    const event = calendly.verify(
      request(BODY, headers(signCalendly({ payload: BODY, secret: KEY, timestamp: T }))),
      NOW,
    );
    expect(event).toEqual(
      verifiedEvent('calendly', BODY, { eventId: `invitee.created:${INVITEE}`, type: 'invitee.created' }),
    );
  });

  it('refuses a tampered body, a wrong key, a missing signature, a stale or future timestamp', () => {
    expectForgeriesRefused({
      provider: calendly,
      secret: KEY,
      body: BODY,
      signatureHeader: 'calendly-webhook-signature',
      sign: (payload, secret) => signCalendly({ payload, secret, timestamp: T }),
      headers,
      now: NOW,
    });
    const good = headers(signCalendly({ payload: BODY, secret: KEY, timestamp: T }));
    expect(refusal(calendly, BODY, good, new Date(NOW.getTime() + 181_000))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(refusal(calendly, BODY, good, new Date(NOW.getTime() - 181_000))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('refuses an authentic delivery without payload.uri', () => {
    const body = '{"event":"invitee.created","payload":{}}';
    const h = headers(signCalendly({ payload: body, secret: KEY, timestamp: T }));
    expect(refusal(calendly, body, h, NOW)).toBe('invalid_payload');
  });
});
