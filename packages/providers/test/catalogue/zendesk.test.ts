import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signZendesk, zendeskProvider } from '../../src/catalogue/providers/zendesk.ts';
import { expectForgeriesRefused, refusal, request, without, verifiedEvent } from './support.ts';

// Zendesk publishes no verification library or test vector; the reference is its documented recipe,
// base64(HMACSHA256(TIMESTAMP + BODY)): https://developer.zendesk.com/documentation/webhooks/verifying/
const SECRET = 'dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ==';
const NOW = new Date('2021-03-25T05:09:27Z');
const TIMESTAMP = '2021-03-25T05:09:27Z';
const BODY = JSON.stringify({
  type: 'zen:event-type:ticket.created',
  account_id: 123456,
  id: '2d4a6d2b-4b1b-4a7e-9f0c-1e2d3c4b5a69',
  time: '2021-03-25T05:09:26Z',
  zendesk_event_version: '2022-11-06',
  subject: 'zen:ticket:35436',
  detail: { id: '35436' },
  event: {},
});
const zendesk = zendeskProvider({ secrets: [SECRET] });
const headers = (signature: string, timestamp = TIMESTAMP): Record<string, string> => ({
  'x-zendesk-account-id': '123456',
  'x-zendesk-webhook-id': '01F1KRFQ6BG29CNWFR60NK5FNY',
  'x-zendesk-webhook-invocation-id': '8350205582',
  'x-zendesk-webhook-signature': signature,
  'x-zendesk-webhook-signature-timestamp': timestamp,
});
const sign = (payload: string, secret: string) => signZendesk({ payload, secret, timestamp: TIMESTAMP });

describe('zendesk', () => {
  it('signs as Zendesk documents it: base64 HMAC-SHA256 of the timestamp followed by the body', () => {
    const expected = createHmac('sha256', SECRET)
      .update(TIMESTAMP + BODY)
      .digest('base64');
    expect(sign(BODY, SECRET)).toBe(expected);
  });

  it('accepts a signed delivery, keyed by the invocation, typed by the event', () => {
    expect(zendesk.verify(request(BODY, headers(sign(BODY, SECRET))), NOW)).toEqual(
      verifiedEvent('zendesk', BODY, {
        eventId: '8350205582',
        type: 'zen:event-type:ticket.created',
        headers: { 'x-zendesk-account-id': '123456', 'x-zendesk-webhook-id': '01F1KRFQ6BG29CNWFR60NK5FNY' },
      }),
    );
    const trigger = '{"ticket_id":"35436","status":"open"}';
    expect(zendesk.verify(request(trigger, headers(sign(trigger, SECRET))), NOW).type).toBe('trigger');
  });

  it('refuses a tampered body, a wrong secret, a missing signature, a moved or stale timestamp', () => {
    expectForgeriesRefused({
      provider: zendesk,
      secret: SECRET,
      body: BODY,
      signatureHeader: 'x-zendesk-webhook-signature',
      sign,
      headers,
      now: NOW,
    });
    const signature = sign(BODY, SECRET);
    expect(refusal(zendesk, BODY, headers(signature, '2021-03-25T05:09:28Z'), NOW)).toBe('invalid_signature');
    expect(refusal(zendesk, BODY, headers(signature, '1616649000'), NOW)).toBe('invalid_signature');
    expect(refusal(zendesk, BODY, headers(signature), new Date(NOW.getTime() + 301_000))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(refusal(zendesk, BODY, without(headers(signature), 'x-zendesk-webhook-invocation-id'), NOW)).toBe(
      'invalid_payload',
    );
  });
});
