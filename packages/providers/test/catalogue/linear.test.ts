import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { linearProvider, signLinear } from '../../src/catalogue/providers/linear.ts';
import { refusal, request, tamper, without } from './support.ts';

const SECRET = 'lin_wh_secret';
const linear = linearProvider({ secrets: [SECRET] });

function body(timestampMs: number): string {
  return JSON.stringify({
    action: 'create',
    type: 'Issue',
    data: { id: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9', title: 'A bug' },
    webhookTimestamp: timestampMs,
    webhookId: '000042e3-d123-4980-b49f-8e140eef9329',
  });
}

function headers(signature: string): Record<string, string> {
  return {
    'Linear-Signature': signature,
    'Linear-Delivery': '234d1a4e-b617-4388-90fe-adc3633d6b72',
    'Linear-Event': 'Issue',
  };
}

describe('linear', () => {
  it("accepts what @linear/sdk's HMAC signs, and LinearWebhookClient accepts what signLinear signs", () => {
    // The SDK checks webhookTimestamp against the real clock, so this body is signed now.
    const now = new Date();
    const payload = body(now.getTime());
    // @linear/sdk verifies and does not sign; Linear's signature is the SDK's own computation, reproduced here.
    const sdkSignature = createHmac('sha256', SECRET).update(payload).digest('hex');
    const event = linear.verify(request(payload, headers(sdkSignature)), now);
    expect(event).toMatchObject({
      provider: 'linear',
      eventId: '234d1a4e-b617-4388-90fe-adc3633d6b72',
      type: 'Issue.create',
      headers: { 'linear-event': 'Issue' },
    });
    const client = new LinearWebhookClient(SECRET);
    expect(client.verify(Buffer.from(payload), signLinear({ payload, secret: SECRET }))).toBe(true);
    expect(() => client.verify(Buffer.from(payload), signLinear({ payload, secret: 'other' }))).toThrow();
  });

  it('refuses a tampered body, a wrong secret, a missing signature, a stale or future timestamp', () => {
    const now = new Date('2026-12-05T00:00:00Z');
    const payload = body(now.getTime());
    const good = headers(signLinear({ payload, secret: SECRET }));
    expect(refusal(linear, payload, good, now)).toBe('no error');
    expect(refusal(linear, tamper(payload), good, now)).toBe('invalid_signature');
    expect(refusal(linear, payload, headers(signLinear({ payload, secret: 'x' })), now)).toBe(
      'invalid_signature',
    );
    expect(refusal(linear, payload, without(good, 'linear-signature'), now)).toBe('missing_signature');
    expect(refusal(linear, payload, good, new Date(now.getTime() + 61_000))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(refusal(linear, payload, good, new Date(now.getTime() - 61_000))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(refusal(linear, payload, without(good, 'linear-delivery'), now)).toBe('invalid_payload');
  });

  it('refuses a signed body without webhookTimestamp', () => {
    const payload = '{"type":"Issue","action":"create"}';
    const h = headers(signLinear({ payload, secret: SECRET }));
    expect(refusal(linear, payload, h, new Date())).toBe('invalid_signature');
  });
});
