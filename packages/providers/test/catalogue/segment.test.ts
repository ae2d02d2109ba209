import { describe } from 'vitest';
import { segmentProvider, signSegment } from '../../src/catalogue/providers/segment.ts';
import { itVerifiesBodyHmac } from './body-hmac-cases.ts';

// Segment publishes no verification library or test vector; the reference is its documented recipe:
// https://segment.com/docs/connections/destinations/catalog/webhooks/#authentication
const SECRET = 'segment-shared-secret';

describe('segment', () => {
  itVerifiesBodyHmac({
    provider: segmentProvider({ secrets: [SECRET] }),
    sign: signSegment,
    reference: { by: 'Segment', digest: 'sha1', encoding: 'hex' },
    secret: SECRET,
    body: JSON.stringify({
      type: 'track',
      event: 'Order Completed',
      messageId: 'ajs-next-1733356800000-3c0f',
      userId: 'u_1',
      properties: { total: 10 },
    }),
    signatureHeader: 'x-signature',
    headers: (signature) => ({ 'X-Signature': signature }),
    event: { eventId: 'ajs-next-1733356800000-3c0f', type: 'track.Order Completed', headers: {} },
    keyless: { body: '{"type":"identify","userId":"u_1"}' },
  });
});
