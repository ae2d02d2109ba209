import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vercelProvider, signVercel } from '../../../src/providers/catalogue/vercel.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Vercel publishes no verification library or test vector; the reference is its documented recipe:
// https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks
const SECRET = 'vercel-webhook-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  id: 'uev_9b1c6e0d1f2a',
  type: 'deployment.succeeded',
  createdAt: 1733356800000,
  region: 'iad1',
  payload: { deployment: { id: 'dpl_2a' }, project: { id: 'prj_1' } },
});
const VERCEL = vercelProvider({ secrets: [SECRET] });
const sign = (payload: string, secret: string) => signVercel({ payload, secret });
const headers = (signature: string): Record<string, string> => ({ 'x-vercel-signature': signature });

describe('vercel', () => {
  it('signs as Vercel documents it: the hex HMAC-SHA1 of the body', () => {
    expect(sign(BODY, SECRET)).toBe(createHmac('sha1', SECRET).update(BODY).digest('hex'));
  });

  itVerifiesBodyHmac({
    provider: VERCEL,
    secret: SECRET,
    body: BODY,
    signatureHeader: 'x-vercel-signature',
    sign,
    headers,
    now: NOW,
    event: {
      eventId: 'uev_9b1c6e0d1f2a',
      type: 'deployment.succeeded',
      headers: {},
    },
    keyless: { body: '{"type":"deployment.created"}' },
  });
});
