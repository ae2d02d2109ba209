import { describe, expect, it } from 'vitest';
import { postmarkProvider, signPostmark } from '../../src/catalogue/providers/postmark.ts';
import { refusal, request, verifiedEvent } from './support.ts';

// Postmark signs nothing: its webhooks carry the Basic Auth credentials written into the webhook URL
// (https://postmarkapp.com/developer/webhooks/webhooks-overview#protecting-your-webhook). The reference is the
// Authorization header any HTTP client makes of https://postmark:s3cret-pass@host/..., RFC 7617.
const SECRET = 'postmark:s3cret-pass';
const NOW = new Date('2026-12-05T00:00:00Z');
const DELIVERY = JSON.stringify({
  RecordType: 'Delivery',
  ServerID: 23,
  MessageStream: 'outbound',
  MessageID: '00000000-0000-0000-0000-000000000000',
  Recipient: 'john@example.com',
  Tag: 'welcome-email',
  DeliveredAt: '2026-12-04T23:59:58Z',
  Details: 'Test delivery webhook details',
});
const postmark = postmarkProvider({ secrets: [SECRET] });

describe('postmark', () => {
  it("sends the Authorization header of the URL's credentials", () => {
    expect(signPostmark({ secret: SECRET })).toBe('Basic cG9zdG1hcms6czNjcmV0LXBhc3M=');
  });

  it('keys each record type by what identifies it', () => {
    const auth = { Authorization: signPostmark({ secret: SECRET }) };
    expect(postmark.verify(request(DELIVERY, auth), NOW)).toEqual(
      verifiedEvent('postmark', DELIVERY, {
        eventId: 'Delivery:00000000-0000-0000-0000-000000000000:john@example.com:2026-12-04T23:59:58Z',
        type: 'Delivery',
      }),
    );
    const bounce =
      '{"RecordType":"Bounce","ID":4323372036854775807,"MessageID":"883953f4","Email":"z@example.com","BouncedAt":"2026-12-04T23:59:00Z"}';
    expect(postmark.verify(request(bounce, auth), NOW).eventId).toBe(
      'Bounce:4323372036854775807:2026-12-04T23:59:00Z',
    );
    const inbound =
      '{"From":"a@example.com","MessageID":"73e6d360-66eb-11e1-8e72-a8904824019b","Subject":"Hi"}';
    expect(postmark.verify(request(inbound, auth), NOW)).toMatchObject({
      eventId: 'Inbound:73e6d360-66eb-11e1-8e72-a8904824019b',
      type: 'Inbound',
    });
  });

  it('refuses wrong or missing credentials, and an authentic body without an id', () => {
    const wrong = { Authorization: signPostmark({ secret: 'postmark:s3cret-pasz' }) };
    expect(refusal(postmark, DELIVERY, wrong, NOW)).toBe('invalid_signature');
    expect(refusal(postmark, DELIVERY, { Authorization: 'Bearer cG9zdG1hcms6czNjcmV0LXBhc3M=' }, NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(postmark, DELIVERY, {}, NOW)).toBe('missing_signature');
    const auth = { Authorization: signPostmark({ secret: SECRET }) };
    expect(refusal(postmark, '{"RecordType":"Open"}', auth, NOW)).toBe('invalid_payload');
  });

  it('refuses at construction a secret that is not user:password', () => {
    expect(() => postmarkProvider({ secrets: ['just-a-password'] })).toThrow(TypeError);
  });
});
