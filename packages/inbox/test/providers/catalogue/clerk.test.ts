import { verifyWebhook } from '@clerk/backend/webhooks';
import { describe, expect, it } from 'vitest';
import { clerkProvider, signClerk } from '../../../src/providers/catalogue/clerk.ts';
import { expectAcceptsSvixSigned, expectSvixForgeriesRefused } from './support.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BODY = JSON.stringify({
  type: 'user.created',
  object: 'event',
  timestamp: 1733356800000,
  data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', object: 'user', email_addresses: [] },
});
const ID = 'msg_2pGS7aBqTcaHBLd3QKwdAEWGkWt';
const clerk = clerkProvider({ secrets: [SECRET] });

describe('clerk', () => {
  it("accepts what Svix's library signs, and Clerk's verifyWebhook accepts what signClerk signs", async () => {
    // Clerk's verifyWebhook checks the timestamp against the real clock, so this message is signed now.
    const now = new Date();
    expectAcceptsSvixSigned(clerk, { id: ID, body: BODY, secret: SECRET }, 'user.created', now);

    const ours = signClerk({
      id: ID,
      payload: BODY,
      secret: SECRET,
      timestamp: Math.floor(now.getTime() / 1000),
    });
    const delivery = new Request('https://app.example.com/webhooks/clerk', {
      method: 'POST',
      headers: ours,
      body: BODY,
    });
    const verified = await verifyWebhook(delivery, { signingSecret: SECRET });
    expect(verified.type).toBe('user.created');
  });

  it('refuses a tampered body, a wrong secret, a missing signature, a stale timestamp', () => {
    expectSvixForgeriesRefused(clerk, signClerk, { id: ID, body: BODY, secret: SECRET });
  });
});
