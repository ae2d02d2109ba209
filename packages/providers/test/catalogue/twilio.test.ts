import { createHash } from 'node:crypto';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { signTwilio, twilioProvider } from '../../src/catalogue/providers/twilio.ts';
import type { SignedRequest } from '../../src/types.ts';
import { codeOf, tamper } from './support.ts';

// Twilio's own helper library signs (getExpectedTwilioSignature) and verifies (validateRequest): both directions
// are checked, with Twilio's documented example (URL, fields and Auth Token) as the first case.
const TOKEN = '12345';
const URL_ = 'https://mycompany.com/myapp.php';
const PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+12349013030',
  Digits: '1234',
  From: '+12349013030',
  To: '+18005551212',
};
const FORM = new URLSearchParams(PARAMS).toString();
const NOW = new Date('2026-12-05T00:00:00Z');
const provider = twilioProvider({ secrets: [TOKEN], url: URL_ });

function post(body: string, headers: Record<string, string>, path = '/webhooks/twilio?foo=1'): SignedRequest {
  const h = new Headers(headers);
  return { rawBody: Buffer.from(body), header: (name) => h.get(name), url: path, method: 'POST' };
}

describe('twilio', () => {
  it("agrees with twilio's getExpectedTwilioSignature and validateRequest, both ways", () => {
    const url = `${URL_}?foo=1`;
    const ours = signTwilio({ url, payload: FORM, secret: TOKEN });
    expect(ours).toBe(twilio.getExpectedTwilioSignature(TOKEN, url, PARAMS));
    expect(twilio.validateRequest(TOKEN, ours, url, PARAMS)).toBe(true);
    expect(twilio.validateRequest(TOKEN, ours, url, { ...PARAMS, Digits: '9' })).toBe(false);
    const theirs = twilio.getExpectedTwilioSignature(TOKEN, url, PARAMS);
    expect(provider.verify(post(FORM, { 'x-twilio-signature': theirs }), NOW).type).toBe('request');
  });

  it('keys by I-Twilio-Idempotency-Token, types by status, stores the form, answers empty TwiML', () => {
    const form = new URLSearchParams({
      MessageSid: 'SM1',
      SmsSid: 'SM1',
      MessageStatus: 'delivered',
      To: '+1555',
    }).toString();
    const headers = {
      'x-twilio-signature': signTwilio({ url: `${URL_}?foo=1`, payload: form, secret: TOKEN }),
      'i-twilio-idempotency-token': 'abc-SM1',
    };
    const event = provider.verify(post(form, headers), NOW);
    expect(event).toMatchObject({ provider: 'twilio', eventId: 'abc-SM1', type: 'message.delivered' });
    expect(JSON.parse(event.payloadText)).toEqual({
      form: { MessageSid: 'SM1', SmsSid: 'SM1', MessageStatus: 'delivered', To: '+1555' },
      raw: form,
    });
    expect(provider.response?.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    const call = new URLSearchParams({ CallSid: 'CA1', CallStatus: 'completed' }).toString();
    const noToken = post(call, {
      'x-twilio-signature': signTwilio({ url: `${URL_}?foo=1`, payload: call, secret: TOKEN }),
    });
    expect(provider.verify(noToken, NOW)).toMatchObject({
      type: 'call.completed',
      eventId: expect.stringMatching(/^sha256:/) as unknown,
    });
  });

  it('accepts the URL signed with :443 as Twilio sometimes does, and a JSON body through bodySHA256', () => {
    const withPort = signTwilio({
      url: 'https://mycompany.com:443/myapp.php?foo=1',
      payload: FORM,
      secret: TOKEN,
    });
    expect(codeOf(() => provider.verify(post(FORM, { 'x-twilio-signature': withPort }), NOW))).toBe(
      'no error',
    );
    const json = '{"status":"ok"}';
    const digest = createHash('sha256').update(json).digest('hex');
    const path = `/webhooks/twilio?bodySHA256=${digest}`;
    const signature = signTwilio({ url: `${URL_}?bodySHA256=${digest}`, payload: '', secret: TOKEN });
    expect(codeOf(() => provider.verify(post(json, { 'x-twilio-signature': signature }, path), NOW))).toBe(
      'no error',
    );
    expect(
      codeOf(() => provider.verify(post('{"status":"no"}', { 'x-twilio-signature': signature }, path), NOW)),
    ).toBe('invalid_signature');
  });

  it('refuses a tampered body, another token, another URL, a missing signature', () => {
    const good = { 'x-twilio-signature': signTwilio({ url: `${URL_}?foo=1`, payload: FORM, secret: TOKEN }) };
    expect(codeOf(() => provider.verify(post(tamper(FORM), good), NOW))).toBe('invalid_signature');
    const other = {
      'x-twilio-signature': signTwilio({ url: `${URL_}?foo=1`, payload: FORM, secret: 'other' }),
    };
    expect(codeOf(() => provider.verify(post(FORM, other), NOW))).toBe('invalid_signature');
    expect(codeOf(() => provider.verify(post(FORM, good, '/webhooks/twilio?foo=2'), NOW))).toBe(
      'invalid_signature',
    );
    expect(codeOf(() => provider.verify(post(FORM, {}), NOW))).toBe('missing_signature');
  });

  it('refuses at start-up a source without its public URL', () => {
    expect(() => twilioProvider({ secrets: [TOKEN], url: 'not a url' })).toThrow(TypeError);
  });
});
