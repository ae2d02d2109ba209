import { describe } from 'vitest';
import { intercomProvider, signIntercom } from '../../src/catalogue/providers/intercom.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Intercom publishes no verification library or test vector; the reference below is its documented recipe:
// https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications
const SECRET = 'intercom-client-secret';

describe('intercom', () => {
  itVerifiesBodyHmac({
    provider: intercomProvider({ secrets: [SECRET] }),
    sign: signIntercom,
    reference: { by: 'Intercom', digest: 'sha1', encoding: 'hex', prefix: 'sha1=' },
    secret: SECRET,
    body: JSON.stringify({
      type: 'notification_event',
      app_id: 'ecahpwf5',
      id: 'notif_ccd8a4d2-c2ae-4e1c-8b3e-3b5b5a9f0c1e',
      topic: 'conversation.user.created',
      delivery_attempts: 1,
      first_sent_at: 1733356800,
      data: { type: 'notification_event_data', item: { type: 'conversation', id: '147' } },
    }),
    signatureHeader: 'x-hub-signature',
    headers: (signature) => ({ 'X-Hub-Signature': signature }),
    event: {
      eventId: 'notif_ccd8a4d2-c2ae-4e1c-8b3e-3b5b5a9f0c1e',
      type: 'conversation.user.created',
      headers: {},
    },
    keyless: { body: '{"type":"notification_event","topic":"ping"}' },
  });
});
