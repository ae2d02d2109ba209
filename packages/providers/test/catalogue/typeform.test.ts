import { describe } from 'vitest';
import { typeformProvider, signTypeform } from '../../src/catalogue/providers/typeform.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Typeform publishes no verification library or test vector; the reference is its documented recipe:
// https://www.typeform.com/developers/webhooks/secure-your-webhooks/
const SECRET = 'typeform-webhook-secret';

describe('typeform', () => {
  itVerifiesBodyHmac({
    provider: typeformProvider({ secrets: [SECRET] }),
    sign: signTypeform,
    reference: { by: 'Typeform', digest: 'sha256', encoding: 'base64', prefix: 'sha256=' },
    secret: SECRET,
    body: JSON.stringify({
      event_id: '01JEB0R1M2ZK4Y4V6P5XK9T0AA',
      event_type: 'form_response',
      form_response: { form_id: 'lT4Z3j', token: 'a3a12ec67a1365927098a606107fac15' },
    }),
    signatureHeader: 'typeform-signature',
    headers: (signature) => ({ 'Typeform-Signature': signature }),
    event: { eventId: '01JEB0R1M2ZK4Y4V6P5XK9T0AA', type: 'form_response', headers: {} },
    keyless: { body: '{"event_type":"form_response"}' },
  });
});
