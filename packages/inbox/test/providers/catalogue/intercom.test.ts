import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { intercomProvider, signIntercom } from '../../../src/providers/catalogue/intercom.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Intercom publishes no verification library or test vector; the reference below is its documented recipe:
// https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications
const SECRET = 'intercom-client-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  type: 'notification_event',
  app_id: 'ecahpwf5',
  id: 'notif_ccd8a4d2-c2ae-4e1c-8b3e-3b5b5a9f0c1e',
  topic: 'conversation.user.created',
  delivery_attempts: 1,
  first_sent_at: 1733356800,
  data: { type: 'notification_event_data', item: { type: 'conversation', id: '147' } },
});
const INTERCOM = intercomProvider({ secrets: [SECRET] });
const sign = (payload: string, secret: string) => signIntercom({ payload, secret });
const headers = (signature: string): Record<string, string> => ({ 'X-Hub-Signature': signature });

describe('intercom', () => {
  it('signs as Intercom documents it: sha1= and the hex HMAC-SHA1 of the body', () => {
    const expected = `sha1=${createHmac('sha1', SECRET).update(BODY).digest('hex')}`;
    expect(sign(BODY, SECRET)).toBe(expected);
  });

  itVerifiesBodyHmac({
    provider: INTERCOM,
    secret: SECRET,
    body: BODY,
    signatureHeader: 'x-hub-signature',
    sign,
    headers,
    now: NOW,
    event: {
      eventId: 'notif_ccd8a4d2-c2ae-4e1c-8b3e-3b5b5a9f0c1e',
      type: 'conversation.user.created',
      headers: {},
    },
    keyless: { body: '{"type":"notification_event","topic":"ping"}' },
  });
});
