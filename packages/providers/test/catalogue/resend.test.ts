import { Resend } from 'resend';
import { describe } from 'vitest';
import { resendProvider, signResend } from '../../src/catalogue/providers/resend.ts';
import { itVerifiesSvixSigned } from './support.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('resend', () => {
  itVerifiesSvixSigned({
    provider: resendProvider({ secrets: [SECRET] }),
    sign: signResend,
    delivery: {
      id: 'msg_2pGS7aBqTcaHBLd3QKwdAEWGkWt',
      body: JSON.stringify({
        type: 'email.delivered',
        created_at: '2026-12-05T00:00:00.000Z',
        data: { email_id: '56761188-7520-42d8-8898-ff6fc54ce618', to: ['a@example.com'] },
      }),
      secret: SECRET,
    },
    type: 'email.delivered',
    sdk: "Resend's SDK",
    sdkVerify: (headers, payload, webhookSecret) =>
      new Resend('re_test_key').webhooks.verify({
        payload,
        headers: {
          id: headers['svix-id'],
          timestamp: headers['svix-timestamp'],
          signature: headers['svix-signature'],
        },
        webhookSecret,
      }),
  });
});
