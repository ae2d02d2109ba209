import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signZoom, zoomProvider } from '../../src/catalogue/providers/zoom.ts';
import { codeOf, refusal, request, tamper, without } from './support.ts';

// Zoom publishes no verification library on npm: its documented recipe (the sample in "Verify webhook events") is
// written out here, independently of the provider: v0=hex HMAC-SHA256 of `v0:{timestamp}:{body}`, and the URL
// validation's encryptedToken, the hex HMAC-SHA256 of plainToken.
const SECRET = 'zoom-secret-token';
const NOW = new Date('2026-12-05T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const BODY = JSON.stringify({
  event: 'meeting.started',
  event_ts: 1764892800123,
  payload: {
    account_id: 'AAAAAABBBB',
    object: { id: '1234567890', uuid: '4444AAAiAAAAAiAiAiiAii==', topic: 'x' },
  },
});
const zoom = zoomProvider({ secrets: [SECRET] });
const signed = (body: string) => request(body, signZoom({ payload: body, secret: SECRET, timestamp: T }));

describe('zoom', () => {
  it("signs as Zoom's documented recipe does", () => {
    const expected = createHmac('sha256', SECRET).update(`v0:${T}:${BODY}`).digest('hex');
    expect(signZoom({ payload: BODY, secret: SECRET, timestamp: T })).toEqual({
      'x-zm-signature': `v0=${expected}`,
      'x-zm-request-timestamp': String(T),
    });
  });

  it('keys an event by event, event_ts and the object uuid, typed by event', () => {
    expect(zoom.verify(signed(BODY), NOW)).toEqual({
      provider: 'zoom',
      eventId: 'meeting.started:1764892800123:4444AAAiAAAAAiAiAiiAii==',
      type: 'meeting.started',
      payloadText: BODY,
      headers: {},
    });
    const noId = JSON.stringify({ event: 'app.deauthorized', event_ts: 5, payload: { account_id: 'ACC' } });
    expect(zoom.verify(signed(noId), NOW).eventId).toBe('app.deauthorized:5:ACC');
    expect(codeOf(() => zoom.verify(signed('{"event":"meeting.started"}'), NOW))).toBe('invalid_payload');
  });

  it('answers a signed endpoint.url_validation with plainToken and its HMAC, recording nothing', () => {
    const body = JSON.stringify({
      payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
      event_ts: 1654503849680,
      event: 'endpoint.url_validation',
    });
    const encryptedToken = createHmac('sha256', SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex');
    expect(zoom.receive?.(signed(body), NOW)).toEqual({
      kind: 'handshake',
      handshake: 'zoom',
      answer: {
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken }),
      },
    });
    const forged = request(body, signZoom({ payload: body, secret: 'other', timestamp: T }));
    expect(codeOf(() => zoom.receive?.(forged, NOW))).toBe('invalid_signature');
  });

  it('refuses a tampered body, a wrong secret, a stale timestamp, a missing signature', () => {
    const good = signZoom({ payload: BODY, secret: SECRET, timestamp: T });
    expect(refusal(zoom, tamper(BODY), good, NOW)).toBe('invalid_signature');
    expect(refusal(zoom, BODY, signZoom({ payload: BODY, secret: 'wrong', timestamp: T }), NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(zoom, BODY, good, new Date(NOW.getTime() - 301_000))).toBe('timestamp_out_of_tolerance');
    expect(refusal(zoom, BODY, without(good, 'x-zm-signature'), NOW)).toBe('missing_signature');
  });
});
