import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mailgunProvider, signMailgun } from '../../src/catalogue/providers/mailgun.ts';
import { refusal, request, verifiedEvent } from './support.ts';

// Mailgun publishes no verification library (mailgun.js manages webhooks, it does not verify them) and no test
// vector; the reference is its documented recipe, hex HMAC-SHA256 of timestamp + token:
// https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks
const KEY = 'key-mailgun-http-webhook-signing-key';
const NOW = new Date('2026-12-05T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const TOKEN = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0';
const DATA = {
  event: 'delivered',
  id: 'CPgfbmQMTCKtHW6uIWtuVe',
  timestamp: 1733356800.5,
  recipient: 'a@example.com',
};
const body = (signature: object, data: object = DATA) => JSON.stringify({ signature, 'event-data': data });
const mailgun = mailgunProvider({ secrets: [KEY] });

describe('mailgun', () => {
  it('signs as Mailgun documents it: hex HMAC-SHA256 of timestamp followed by token', () => {
    const expected = createHmac('sha256', KEY).update(`${T}${TOKEN}`).digest('hex');
    expect(signMailgun({ secret: KEY, token: TOKEN, timestamp: T })).toEqual({
      timestamp: String(T),
      token: TOKEN,
      signature: expected,
    });
  });

  it('accepts a signed delivery, keyed by event-data.id', () => {
    const payload = body(signMailgun({ secret: KEY, token: TOKEN, timestamp: T }));
    expect(mailgun.verify(request(payload, {}), NOW)).toEqual(
      verifiedEvent('mailgun', payload, { eventId: 'CPgfbmQMTCKtHW6uIWtuVe', type: 'delivered' }),
    );
  });

  it('refuses a tampered token or timestamp, a wrong key, a missing signature, a stale timestamp', () => {
    const signed = signMailgun({ secret: KEY, token: TOKEN, timestamp: T });
    expect(refusal(mailgun, body({ ...signed, token: `${TOKEN.slice(1)}b` }), {}, NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(mailgun, body({ ...signed, timestamp: String(T + 1) }), {}, NOW)).toBe(
      'invalid_signature',
    );
    expect(
      refusal(mailgun, body(signMailgun({ secret: 'other', token: TOKEN, timestamp: T })), {}, NOW),
    ).toBe('invalid_signature');
    expect(refusal(mailgun, JSON.stringify({ 'event-data': DATA }), {}, NOW)).toBe('missing_signature');
    expect(refusal(mailgun, body(signed), {}, new Date(NOW.getTime() + 301_000))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('cannot refuse altered event data: Mailgun does not sign it (the documented limit of its scheme)', () => {
    const signed = signMailgun({ secret: KEY, token: TOKEN, timestamp: T });
    const altered = body(signed, { ...DATA, event: 'failed' });
    expect(refusal(mailgun, altered, {}, NOW)).toBe('no error');
  });
});
