import { describe } from 'vitest';
import { vercelProvider, signVercel } from '../../src/catalogue/providers/vercel.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Vercel publishes no verification library or test vector; the reference is its documented recipe:
// https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks
const SECRET = 'vercel-webhook-secret';

describe('vercel', () => {
  itVerifiesBodyHmac({
    provider: vercelProvider({ secrets: [SECRET] }),
    sign: signVercel,
    reference: { by: 'Vercel', digest: 'sha1', encoding: 'hex' },
    secret: SECRET,
    body: JSON.stringify({
      id: 'uev_9b1c6e0d1f2a',
      type: 'deployment.succeeded',
      createdAt: 1733356800000,
      region: 'iad1',
      payload: { deployment: { id: 'dpl_2a' }, project: { id: 'prj_1' } },
    }),
    signatureHeader: 'x-vercel-signature',
    headers: (signature) => ({ 'x-vercel-signature': signature }),
    event: { eventId: 'uev_9b1c6e0d1f2a', type: 'deployment.succeeded', headers: {} },
    keyless: { body: '{"type":"deployment.created"}' },
  });
});
