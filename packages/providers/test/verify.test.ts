import { describe, expect, it } from 'vitest';
import { githubProvider, signGithub, signStripe, stripeProvider, verify } from '../src/index.ts';

const SECRET = 'verify-test-secret';
const WHSEC = 'whsec_verify_test_secret';

describe('verify', () => {
  const github = githubProvider({ secrets: [SECRET] });
  const body = JSON.stringify({ action: 'opened', pull_request: { number: 7 } });
  const headers = {
    'X-GitHub-Event': 'pull_request',
    'X-GitHub-Delivery': 'delivery-1',
    'X-Hub-Signature-256': signGithub({ payload: body, secret: SECRET }),
  };

  it('verifies a request given as Node hands it over: headers in any case, the body as text', async () => {
    const result = await verify(github, { method: 'post', url: '/webhooks/github', headers, rawBody: body });
    expect(result).toMatchObject({
      ok: true,
      kind: 'events',
      events: [{ provider: 'github', eventId: 'delivery-1', type: 'pull_request.opened', payloadText: body }],
    });
  });

  it('returns a refusal with its stable code, never throws one', async () => {
    const tampered = await verify(github, { headers, rawBody: body.replace('7', '8') });
    expect(tampered).toMatchObject({ ok: false, code: 'invalid_signature', retryable: false });
    const unsigned = await verify(github, {
      headers: { 'x-github-event': 'push', 'x-github-delivery': 'delivery-2' },
      rawBody: body,
    });
    expect(unsigned).toMatchObject({ ok: false, code: 'missing_signature' });
  });

  it('verifies a fetch-style request: Headers, a full URL, the body as bytes, the clock given', async () => {
    const stripe = stripeProvider({ secrets: [WHSEC], toleranceSeconds: 300 });
    const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'charge.refunded' });
    const signedAt = 1_800_000_000;
    const request = {
      url: 'https://example.com/webhooks/stripe?x=1',
      headers: new Headers({
        'Stripe-Signature': signStripe({ payload, secret: WHSEC, timestamp: signedAt }),
      }),
      rawBody: new TextEncoder().encode(payload),
    };
    expect(await verify(stripe, request, new Date(signedAt * 1000))).toMatchObject({
      ok: true,
      events: [{ provider: 'stripe', eventId: 'evt_1', type: 'charge.refunded' }],
    });
    expect(await verify(stripe, request, new Date((signedAt + 301) * 1000))).toMatchObject({
      ok: false,
      code: 'timestamp_out_of_tolerance',
    });
  });
});
