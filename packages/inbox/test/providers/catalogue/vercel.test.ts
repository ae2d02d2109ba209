import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vercelProvider, signVercel } from '../../../src/providers/catalogue/vercel.ts';
import { expectForgeriesRefused, refusal, request } from './support.ts';

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

  it('accepts a signed delivery and identifies the event', () => {
    const event = VERCEL.verify(request(BODY, headers(sign(BODY, SECRET))), NOW);
    expect(event).toEqual({
      provider: 'vercel',
      eventId: 'uev_9b1c6e0d1f2a',
      type: 'deployment.succeeded',
      payloadText: BODY,
      headers: {},
    });
  });

  it('refuses a tampered body, a wrong secret, a missing or malformed signature', () => {
    expectForgeriesRefused({
      provider: VERCEL,
      secret: SECRET,
      body: BODY,
      signatureHeader: 'x-vercel-signature',
      sign,
      headers,
      now: NOW,
    });
  });

  it('refuses an authentic delivery without its event key', () => {
    const body = '{"type":"deployment.created"}';
    expect(refusal(VERCEL, body, headers(sign(body, SECRET)), NOW)).toBe('invalid_payload');
  });
});
