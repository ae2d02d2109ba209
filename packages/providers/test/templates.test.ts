import { describe, expect, it } from 'vitest';
import { InvalidPayloadError, InvalidSignatureError } from '../src/errors.ts';
import { hmacProvider, signHmac, type HmacSpec } from '../src/hmac.ts';
import { parseSourcesFile } from '../src/sources-file.ts';
import { pointerTokens, readPointer } from '../src/pointer.ts';
import { decodeForm, parseJsonLossless, scalarText } from '../src/template-body.ts';
import type { TemplateSpec } from '../src/template-schema.ts';
import type { SignedRequest } from '../src/types.ts';

// The template pieces on their own (no database): pointers, lossless JSON, form fields, signature decoding, and
// what the sources file refuses. The receiver's tests cover each template over HTTP.

const template = (overrides: Partial<TemplateSpec> = {}): TemplateSpec => ({
  eventKey: { pointer: '/id' },
  eventType: { constant: 'webhook' },
  body: 'json',
  formJsonFields: [],
  ...overrides,
});
const spec: HmacSpec = {
  header: 'X-Sig',
  algorithm: 'sha256',
  encoding: 'base64',
  prefix: '',
  signed: '{body}',
};
const requestOf = (body: string, headers: Record<string, string>, url = '/webhooks/t'): SignedRequest => ({
  rawBody: Buffer.from(body),
  header: (name) =>
    headers[Object.keys(headers).find((key) => key.toLowerCase() === name.toLowerCase()) ?? ''],
  method: 'POST',
  url,
});

describe('JSON pointers and lossless JSON', () => {
  it('unescapes ~1 and ~0, indexes arrays, and refuses what RFC 6901 refuses', () => {
    expect(pointerTokens('/a~1b/m~0n/0')).toEqual(['a/b', 'm~n', '0']);
    expect(pointerTokens('')).toEqual([]);
    expect(() => pointerTokens('a')).toThrow(/must be empty or start with "\/"/);
    expect(() => pointerTokens('/a~2')).toThrow(/~/);
    const value = parseJsonLossless('t', '{"a/b":{"m~n":[{"id":90071992547409931234}]}}');
    expect(scalarText(readPointer(value, pointerTokens('/a~1b/m~0n/0/id')))).toBe('90071992547409931234');
    expect(readPointer(value, pointerTokens('/a~1b/m~0n/01'))).toBeUndefined();
    expect(readPointer(value, pointerTokens('/toString'))).toBeUndefined();
  });

  it('a batch item re-serialized keeps every digit', () => {
    const value = parseJsonLossless('t', '[{"amount":12345678901234567890.50,"e":1e400}]') as unknown[];
    expect(JSON.stringify(value[0])).toBe('{"amount":12345678901234567890.50,"e":1e400}');
  });
});

describe('form bodies', () => {
  it('fields by name, a repeated name as an array, JSON fields parsed, the raw text kept', () => {
    const raw = 'a=1&b=x+y&a=2&payload=%7B%22n%22%3A1%7D';
    const { value, payloadText } = decodeForm('t', Buffer.from(raw), ['payload']);
    expect(JSON.parse(payloadText)).toEqual({ form: { a: ['1', '2'], b: 'x y', payload: { n: 1 } }, raw });
    expect(scalarText(readPointer(value, ['payload', 'n']))).toBe('1');
    expect(() => decodeForm('t', Buffer.from('payload=%7B'), ['payload'])).toThrow(InvalidPayloadError);
  });
});

describe('hmac template', () => {
  const provider = hmacProvider({
    name: 't',
    secrets: ['k'],
    hmac: spec,
    template: template(),
    toleranceSeconds: 300,
  });
  const body = '{"id":"e1"}';
  const signature = signHmac({ hmac: spec, secret: 'k', payload: body })['X-Sig'] as string;

  it('accepts the canonical signature, refuses a non-canonical spelling of the same bytes', () => {
    expect(provider.verify(requestOf(body, { 'X-Sig': signature }), new Date()).eventId).toBe('e1');
    // Base64 decoders skip characters they do not know: the same bytes with a stray character must not match.
    expect(() =>
      provider.verify(
        requestOf(body, { 'X-Sig': `${signature.slice(0, 10)}!${signature.slice(10)}` }),
        new Date(),
      ),
    ).toThrow(InvalidSignatureError);
  });

  it('a batch source is not one event: verify refuses it, receive answers every item', () => {
    const batch = hmacProvider({
      name: 'b',
      secrets: ['k'],
      hmac: spec,
      template: template({ batch: { items: '/items' } }),
      toleranceSeconds: 300,
    });
    const items = '{"items":[{"id":"1"},{"id":"2"}]}';
    const headers = signHmac({ hmac: spec, secret: 'k', payload: items });
    expect(() => batch.verify(requestOf(items, headers), new Date())).toThrow(/not exactly one event/);
    const reception = batch.receive?.(requestOf(items, headers), new Date());
    expect(reception?.kind === 'events' && reception.events.map((e) => [e.eventId, e.payloadText])).toEqual([
      ['1', '{"id":"1"}'],
      ['2', '{"id":"2"}'],
    ]);
  });

  it('bodyHash keys: the same bytes, the same key; one byte more, another', () => {
    const hashed = hmacProvider({
      name: 'h',
      secrets: ['k'],
      hmac: spec,
      template: template({ eventKey: { bodyHash: true } }),
      toleranceSeconds: 300,
    });
    const key = (text: string) =>
      hashed.verify(requestOf(text, signHmac({ hmac: spec, secret: 'k', payload: text })), new Date())
        .eventId;
    expect(key('{"a":1}')).toBe(key('{"a":1}'));
    expect(key('{"a":1}')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(key('{"a":1} ')).not.toBe(key('{"a":1}'));
  });
});

describe('a template built in code', () => {
  // The same rules as the sources file (template-rules.ts), as a TypeError naming the source and the field.
  const build =
    (overrides: Partial<TemplateSpec>, hmac: HmacSpec = spec) =>
    () =>
      hmacProvider({ name: 'h', secrets: ['k'], hmac, template: template(overrides), toleranceSeconds: 300 });

  it('refuses a key from a header the signature does not cover (was accepted before)', () => {
    expect(build({ eventKey: { header: 'X-Delivery' } })).toThrow(
      /^h: eventKey\.header: X-Delivery is not covered by the signature/,
    );
    const withId: HmacSpec = { ...spec, signed: '{id}.{body}', id: { header: 'X-Delivery' } };
    expect(build({ eventKey: { header: 'x-delivery' } }, withId)).not.toThrow();
  });

  it('refuses crc unless the signature is the body alone and the body JSON (was accepted before)', () => {
    const crc = { handshake: { type: 'crc' as const }, eventKey: { bodyHash: true as const } };
    expect(build({ ...crc, body: 'form' })).toThrow(/^h: handshake\.type: crc answers anyone/);
    const timestamped: HmacSpec = { ...spec, signed: '{timestamp}{body}', timestamp: { header: 'X-Ts' } };
    expect(build(crc, timestamped)).toThrow(/^h: handshake\.type: crc answers anyone/);
    expect(build(crc)).not.toThrow();
  });
});

describe('the sources file', () => {
  it('refuses unknown fields (a typo is not silently ignored)', () => {
    expect(() =>
      parseSourcesFile(
        's.yaml',
        'sources:\n  x:\n    type: basic-auth\n    secrets: [u:p]\n    eventkey: { pointer: /id }\n',
      ),
    ).toThrow(/source "x": .*eventkey/);
  });
});

describe("providers' documented examples", () => {
  it("Slack's slash command (v0:{timestamp}:{body}, form body): verified at its own time, stale now", () => {
    const slack = hmacProvider({
      name: 'slack-commands',
      secrets: ['8f742231b10e8888abcd99yyyzzz85a5'],
      hmac: {
        header: 'X-Slack-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        prefix: 'v0=',
        signed: 'v0:{timestamp}:{body}',
        timestamp: { header: 'X-Slack-Request-Timestamp' },
      },
      template: template({
        body: 'form',
        eventKey: { pointer: '/trigger_id' },
        eventType: { pointer: '/command' },
      }),
      toleranceSeconds: 300,
    });
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V' +
      '&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=' +
      '&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN' +
      '&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const request = requestOf(body, {
      'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
      'X-Slack-Request-Timestamp': '1531420618',
    });
    const event = slack.verify(request, new Date(1531420618 * 1000));
    expect({ key: event.eventId, type: event.type }).toEqual({
      key: '398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
      type: '/webhook-collect',
    });
    expect(() => slack.verify(request, new Date())).toThrow(/outside the tolerance/);
  });
});
