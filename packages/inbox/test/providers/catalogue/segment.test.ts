import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { segmentProvider, signSegment } from '../../../src/providers/catalogue/segment.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Segment publishes no verification library or test vector; the reference is its documented recipe:
// https://segment.com/docs/connections/destinations/catalog/webhooks/#authentication
const SECRET = 'segment-shared-secret';
const NOW = new Date('2026-12-05T00:00:00Z');
const BODY = JSON.stringify({
  type: 'track',
  event: 'Order Completed',
  messageId: 'ajs-next-1733356800000-3c0f',
  userId: 'u_1',
  properties: { total: 10 },
});
const SEGMENT = segmentProvider({ secrets: [SECRET] });
const sign = (payload: string, secret: string) => signSegment({ payload, secret });
const headers = (signature: string): Record<string, string> => ({ 'X-Signature': signature });

describe('segment', () => {
  it('signs as Segment documents it: the hex HMAC-SHA1 of the body', () => {
    expect(sign(BODY, SECRET)).toBe(createHmac('sha1', SECRET).update(BODY).digest('hex'));
  });

  itVerifiesBodyHmac({
    provider: SEGMENT,
    secret: SECRET,
    body: BODY,
    signatureHeader: 'x-signature',
    sign,
    headers,
    now: NOW,
    event: {
      eventId: 'ajs-next-1733356800000-3c0f',
      type: 'track.Order Completed',
      headers: {},
    },
    keyless: { body: '{"type":"identify","userId":"u_1"}' },
  });
});
