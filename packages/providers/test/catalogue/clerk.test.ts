import { verifyWebhook } from '@clerk/backend/webhooks';
import { describe } from 'vitest';
import { clerkProvider, signClerk } from '../../src/catalogue/providers/clerk.ts';
import { itVerifiesSvixSigned } from './support.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('clerk', () => {
  itVerifiesSvixSigned({
    provider: clerkProvider({ secrets: [SECRET] }),
    sign: signClerk,
    delivery: {
      id: 'msg_2pGS7aBqTcaHBLd3QKwdAEWGkWt',
      body: JSON.stringify({
        type: 'user.created',
        object: 'event',
        timestamp: 1733356800000,
        data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', object: 'user', email_addresses: [] },
      }),
      secret: SECRET,
    },
    type: 'user.created',
    sdk: "Clerk's verifyWebhook",
    sdkVerify: (headers, body, secret) =>
      verifyWebhook(
        new Request('https://app.example.com/webhooks/clerk', { method: 'POST', headers, body }),
        {
          signingSecret: secret,
        },
      ),
  });
});
