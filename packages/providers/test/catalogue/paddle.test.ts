import { Paddle } from '@paddle/paddle-node-sdk';
import { describe, expect, it } from 'vitest';
import { paddleProvider, signPaddle } from '../../src/catalogue/providers/paddle.ts';
import { refusal, request, tamper, verifiedEvent } from './support.ts';

const SECRET = 'pdl_ntfset_01hv8x29kz0t586xy6zn1a62ve_xHEe0YF3rpGwmVk8jAbXW8Ptp0N8rsHc';
const BODY = JSON.stringify({
  event_id: 'evt_01hv8x2acma2gz9aba0mt2yjx4',
  event_type: 'transaction.completed',
  occurred_at: '2024-04-12T10:18:49.621022Z',
  notification_id: 'ntf_01hv8x2af8xdgcwhnrxfe7z8kg',
  data: { id: 'txn_01hv8wptq8987qeep44cyrewp9', status: 'completed' },
});
// Paddle's SDK checks the timestamp against the real clock with a 5-second window, so SDK round trips sign now.
const paddleSdk = new Paddle('pdl_sdbx_apikey_01hv8x2acma2gz9aba0mt2yjx4_test');
const paddle = paddleProvider({ secrets: [SECRET] });

describe('paddle', () => {
  it('the Paddle SDK accepts what signPaddle signs, and so does the provider (the SDK only verifies)', async () => {
    const now = new Date();
    const signature = signPaddle({
      payload: BODY,
      secret: SECRET,
      timestamp: Math.floor(now.getTime() / 1000),
    });
    expect(await paddleSdk.webhooks.isSignatureValid(BODY, SECRET, signature)).toBe(true);
    expect(await paddleSdk.webhooks.isSignatureValid(tamper(BODY), SECRET, signature)).toBe(false);
    const event = paddle.verify(request(BODY, { 'Paddle-Signature': signature }), now);
    expect(event).toEqual(
      verifiedEvent('paddle', BODY, {
        eventId: 'evt_01hv8x2acma2gz9aba0mt2yjx4',
        type: 'transaction.completed',
      }),
    );
  });

  it('accepts any h1 during a rotation, and any configured secret', () => {
    const now = new Date('2026-12-05T00:00:00Z');
    const ts = Math.floor(now.getTime() / 1000);
    const oldH1 = signPaddle({ payload: BODY, secret: 'old-secret', timestamp: ts }).split(';')[1]!;
    const header = `${signPaddle({ payload: BODY, secret: SECRET, timestamp: ts })};${oldH1}`;
    expect(refusal(paddle, BODY, { 'Paddle-Signature': header }, now)).toBe('no error');
    const rotating = paddleProvider({ secrets: ['old-secret'] });
    expect(refusal(rotating, BODY, { 'Paddle-Signature': header }, now)).toBe('no error');
  });

  it('refuses a tampered body, a wrong secret, a missing header, a stale or future timestamp', () => {
    const now = new Date('2026-12-05T00:00:00Z');
    const ts = Math.floor(now.getTime() / 1000);
    const good = { 'Paddle-Signature': signPaddle({ payload: BODY, secret: SECRET, timestamp: ts }) };
    expect(refusal(paddle, tamper(BODY), good, now)).toBe('invalid_signature');
    const wrong = { 'Paddle-Signature': signPaddle({ payload: BODY, secret: 'x', timestamp: ts }) };
    expect(refusal(paddle, BODY, wrong, now)).toBe('invalid_signature');
    expect(refusal(paddle, BODY, {}, now)).toBe('missing_signature');
    expect(refusal(paddle, BODY, { 'Paddle-Signature': 'h1=abc' }, now)).toBe('invalid_signature');
    expect(refusal(paddle, BODY, good, new Date(now.getTime() + 6000))).toBe('timestamp_out_of_tolerance');
    expect(refusal(paddle, BODY, good, new Date(now.getTime() - 6000))).toBe('timestamp_out_of_tolerance');
    const lenient = paddleProvider({ secrets: [SECRET], toleranceSeconds: 300 });
    expect(refusal(lenient, BODY, good, new Date(now.getTime() + 60_000))).toBe('no error');
  });
});
