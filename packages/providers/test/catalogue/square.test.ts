import { WebhooksHelper } from 'square';
import { describe, expect, it } from 'vitest';
import { signSquare, squareProvider } from '../../src/catalogue/providers/square.ts';
import { refusal, request, tamper, verifiedEvent } from './support.ts';

const KEY = 'asdf1234-square-signature-key';
const URL = 'https://hooks.example.com/webhooks/square?source=prod';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  merchant_id: '6SSW7HV8K2ST5',
  type: 'payment.updated',
  event_id: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
  created_at: '2026-12-04T23:59:58Z',
  data: {
    type: 'payment',
    id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
    object: { payment: { amount_money: { amount: 100 } } },
  },
});
const square = squareProvider({ secrets: [KEY], url: URL });

describe('square', () => {
  it("Square's WebhooksHelper accepts what signSquare signs, and refuses it for another URL or body", async () => {
    const signatureHeader = signSquare({ payload: BODY, secret: KEY, url: URL });
    const verify = (requestBody: string, notificationUrl: string) =>
      WebhooksHelper.verifySignature({ requestBody, signatureHeader, signatureKey: KEY, notificationUrl });
    expect(await verify(BODY, URL)).toBe(true);
    expect(await verify(BODY, 'https://hooks.example.com/webhooks/square')).toBe(false);
    expect(await verify(tamper(BODY), URL)).toBe(false);
  });

  it('accepts the signature over the configured URL, keyed by event_id', () => {
    const event = square.verify(
      request(BODY, {
        'x-square-hmacsha256-signature': signSquare({ payload: BODY, secret: KEY, url: URL }),
      }),
      NOW,
    );
    expect(event).toEqual(
      verifiedEvent('square', BODY, {
        eventId: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
        type: 'payment.updated',
      }),
    );
  });

  it('refuses a tampered body, a wrong key, another URL, a missing header', () => {
    const sig = (secret: string, url: string) => ({
      'x-square-hmacsha256-signature': signSquare({ payload: BODY, secret, url }),
    });
    expect(refusal(square, tamper(BODY), sig(KEY, URL), NOW)).toBe('invalid_signature');
    expect(refusal(square, BODY, sig('other', URL), NOW)).toBe('invalid_signature');
    expect(refusal(square, BODY, sig(KEY, 'http://localhost:3000/webhooks/square'), NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(square, BODY, {}, NOW)).toBe('missing_signature');
  });

  it('refuses to start without an absolute URL', () => {
    expect(() => squareProvider({ secrets: [KEY], url: '/webhooks/square' })).toThrow(TypeError);
  });
});
