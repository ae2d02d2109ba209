import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { typeformProvider, signTypeform } from '../../../src/providers/catalogue/typeform.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Typeform publishes no verification library or test vector; the reference is its documented recipe:
// https://www.typeform.com/developers/webhooks/secure-your-webhooks/
const SECRET = 'typeform-webhook-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  event_id: '01JEB0R1M2ZK4Y4V6P5XK9T0AA',
  event_type: 'form_response',
  form_response: { form_id: 'lT4Z3j', token: 'a3a12ec67a1365927098a606107fac15' },
});
const TYPEFORM = typeformProvider({ secrets: [SECRET] });
const sign = (payload: string, secret: string) => signTypeform({ payload, secret });
const headers = (signature: string): Record<string, string> => ({ 'Typeform-Signature': signature });

describe('typeform', () => {
  it('signs as Typeform documents it: sha256= and the base64 HMAC-SHA256 of the body', () => {
    const expected = `sha256=${createHmac('sha256', SECRET).update(BODY).digest('base64')}`;
    expect(sign(BODY, SECRET)).toBe(expected);
  });

  itVerifiesBodyHmac({
    provider: TYPEFORM,
    secret: SECRET,
    body: BODY,
    signatureHeader: 'typeform-signature',
    sign,
    headers,
    now: NOW,
    event: {
      eventId: '01JEB0R1M2ZK4Y4V6P5XK9T0AA',
      type: 'form_response',
      headers: {},
    },
    keyless: { body: '{"event_type":"form_response"}' },
  });
});
