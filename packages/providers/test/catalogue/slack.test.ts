import { verifySlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { signSlack, slackProvider } from '../../src/catalogue/providers/slack.ts';
import { codeOf, refusal, request, tamper, without } from './support.ts';

// Slack publishes @slack/bolt, whose verifySlackRequest verifies (it does not sign): it must accept what signSlack
// makes and refuse it once changed, and our provider must accept exactly what Slack's recipe signs.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NOW = new Date('2026-12-05T00:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const EVENT = JSON.stringify({
  token: 'unused',
  team_id: 'T061EG9R6',
  api_app_id: 'A0PNCHHK2',
  event: { type: 'app_mention', user: 'U061F7AUR', text: '<@U0LAN0Z89> hi', ts: '1515449522.000016' },
  type: 'event_callback',
  event_id: 'Ev0PV52K25',
  event_time: 1515449522,
});
const slack = slackProvider({ secrets: [SECRET] });
const signed = (body: string, timestamp = T) =>
  request(body, signSlack({ payload: body, secret: SECRET, timestamp }));

describe('slack', () => {
  it("@slack/bolt's verifySlackRequest accepts what signSlack signs, and refuses a changed body or secret", () => {
    const headers = signSlack({ payload: EVENT, secret: SECRET, timestamp: T });
    const check = (body: string, signingSecret: string) => () =>
      verifySlackRequest({
        signingSecret,
        body,
        headers: {
          'x-slack-signature': headers['x-slack-signature']!,
          'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
        },
        nowMilliseconds: NOW.getTime(),
      });
    expect(check(EVENT, SECRET)).not.toThrow();
    expect(check(tamper(EVENT), SECRET)).toThrow();
    expect(check(EVENT, `${SECRET}x`)).toThrow();
  });

  it("matches Slack's documented recipe: v0= hex HMAC-SHA256 of v0:<timestamp>:<body>", async () => {
    const { createHmac } = await import('node:crypto');
    const expected = createHmac('sha256', SECRET).update(`v0:${T}:${EVENT}`).digest('hex');
    expect(signSlack({ payload: EVENT, secret: SECRET, timestamp: T })['x-slack-signature']).toBe(
      `v0=${expected}`,
    );
  });

  it('records an Events API callback keyed by event_id and typed by the inner event, answered with an empty 200', () => {
    const event = slack.verify(
      request(EVENT, {
        ...signSlack({ payload: EVENT, secret: SECRET, timestamp: T }),
        'X-Slack-Retry-Num': '1',
      }),
      NOW,
    );
    expect(event).toEqual({
      provider: 'slack',
      eventId: 'Ev0PV52K25',
      type: 'app_mention',
      payloadText: EVENT,
      headers: { 'x-slack-retry-num': '1' },
    });
    expect(slack.response).toEqual({ status: 200, contentType: 'text/plain; charset=utf-8', body: '' });
  });

  it('answers a signed url_verification with its challenge and records nothing', () => {
    const body = JSON.stringify({
      token: 'x',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    expect(slack.receive?.(signed(body), NOW)).toEqual({
      kind: 'handshake',
      handshake: 'slack',
      answer: {
        status: 200,
        contentType: 'text/plain; charset=utf-8',
        body: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      },
    });
    const forged = request(body, signSlack({ payload: body, secret: 'another', timestamp: T }));
    expect(codeOf(() => slack.receive?.(forged, NOW))).toBe('invalid_signature');
  });

  it('records an interaction (form payload=) by trigger_id and type, and a slash command by trigger_id', () => {
    const payload = JSON.stringify({
      type: 'block_actions',
      trigger_id: '13345224609.738474920.8088930838d88f008e0',
      actions: [],
    });
    const form = `payload=${encodeURIComponent(payload)}`;
    const interaction = slack.verify(signed(form), NOW);
    expect({ key: interaction.eventId, type: interaction.type }).toEqual({
      key: '13345224609.738474920.8088930838d88f008e0',
      type: 'block_actions',
    });
    expect(JSON.parse(interaction.payloadText)).toEqual({
      form: { payload: JSON.parse(payload) as unknown },
      raw: form,
    });
    const command = 'command=%2Fweather&text=94070&trigger_id=13345224609.1&team_id=T0001';
    expect(slack.verify(signed(command), NOW)).toMatchObject({
      eventId: '13345224609.1',
      type: 'slash_command:/weather',
    });
    const closed = `payload=${encodeURIComponent(JSON.stringify({ type: 'view_closed', view: { id: 'V1' } }))}`;
    expect(slack.verify(signed(closed), NOW).eventId).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('refuses a tampered body, a wrong secret, a stale timestamp, a missing or malformed signature', () => {
    const good = signSlack({ payload: EVENT, secret: SECRET, timestamp: T });
    expect(refusal(slack, tamper(EVENT), good, NOW)).toBe('invalid_signature');
    expect(refusal(slack, EVENT, signSlack({ payload: EVENT, secret: 'wrong', timestamp: T }), NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(slack, EVENT, { ...good, 'x-slack-request-timestamp': String(T + 1) }, NOW)).toBe(
      'invalid_signature',
    );
    expect(refusal(slack, EVENT, good, new Date(NOW.getTime() + 301_000))).toBe('timestamp_out_of_tolerance');
    expect(refusal(slack, EVENT, without(good, 'x-slack-signature'), NOW)).toBe('missing_signature');
    expect(
      refusal(slack, EVENT, { ...good, 'x-slack-signature': good['x-slack-signature']!.slice(3) }, NOW),
    ).toBe('invalid_signature');
    expect(refusal(slack, EVENT, without(good, 'x-slack-request-timestamp'), NOW)).toBe('invalid_signature');
  });

  it('refuses an authentic callback without event_id as invalid_payload', () => {
    const body = JSON.stringify({ type: 'event_callback', event: { type: 'message' } });
    expect(codeOf(() => slack.verify(signed(body), NOW))).toBe('invalid_payload');
  });
});
