import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { resendProvider, signResend } from '../../../src/providers/catalogue/resend.ts';
import { expectAcceptsSvixSigned, expectSvixForgeriesRefused } from './support.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BODY = JSON.stringify({
  type: 'email.delivered',
  created_at: '2026-12-05T00:00:00.000Z',
  data: { email_id: '56761188-7520-42d8-8898-ff6fc54ce618', to: ['a@example.com'] },
});
const ID = 'msg_2pGS7aBqTcaHBLd3QKwdAEWGkWt';
const resend = resendProvider({ secrets: [SECRET] });

describe('resend', () => {
  it("accepts what Svix's library signs, and Resend's SDK accepts what signResend signs", () => {
    // Resend's SDK checks the timestamp against the real clock, so this message is signed now.
    const now = new Date();
    expectAcceptsSvixSigned(resend, { id: ID, body: BODY, secret: SECRET }, 'email.delivered', now);

    const ours = signResend({
      id: ID,
      payload: BODY,
      secret: SECRET,
      timestamp: Math.floor(now.getTime() / 1000),
    });
    const sdk = new Resend('re_test_key');
    const verified = sdk.webhooks.verify({
      payload: BODY,
      headers: { id: ours['svix-id'], timestamp: ours['svix-timestamp'], signature: ours['svix-signature'] },
      webhookSecret: SECRET,
    });
    expect(verified.type).toBe('email.delivered');
  });

  it('refuses a tampered body, a wrong secret, a missing signature, a stale timestamp', () => {
    expectSvixForgeriesRefused(resend, signResend, { id: ID, body: BODY, secret: SECRET });
  });
});
