import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookError } from '../src/errors.ts';
import { signStandardWebhook, standardWebhooksProvider } from '../src/standard-webhooks.ts';
import type { SignedRequest } from '../src/types.ts';
import { codeOf, expectSignedBodiesVerifyOrInvalidPayload } from './catalogue/support.ts';

// standard-webhooks/standard-webhooks@b2fa7b87 libraries/javascript/src/webhook.test.ts ('sign function works')
const V1 = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
// standard-webhooks/standard-webhooks@b2fa7b87 libraries/rust/src/lib.rs (test_sign)
const V2 = {
  secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  id: 'msg_27UH4WbU6Z5A5EzD8u03UvzRbpk',
  timestamp: '1649367553',
  payload: '{"email":"test@example.com","username":"test_user"}',
  signature: 'v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=',
};

const SECRET = V1.secret;
const OTHER_SECRET = V2.secret;
const T = 1_700_000_000;
const NOW = new Date(T * 1000);
const TOLERANCE = 300;
const ID = 'msg_2b6Zq1';
const BODY = '{"type":"invoice.paid","data":{"id":"in_1"}}';

const provider = standardWebhooksProvider({ name: 'svix', secrets: [SECRET], toleranceSeconds: TOLERANCE });

function request(body: string | Uint8Array, headers: Record<string, string>): SignedRequest {
  const h = new Headers(headers);
  return { rawBody: typeof body === 'string' ? Buffer.from(body) : body, header: (name) => h.get(name) };
}

function signedHeaders(
  body: string | Uint8Array,
  opts: { id?: string; timestamp?: number; secret?: string } = {},
): Record<string, string> {
  const id = opts.id ?? ID;
  const timestamp = opts.timestamp ?? T;
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook({ id, timestamp, payload: body, secret: opts.secret ?? SECRET }),
  };
}

const signed = (body: string | Uint8Array, opts: { id?: string; timestamp?: number; secret?: string } = {}) =>
  request(body, signedHeaders(body, opts));

describe('third-party vectors', () => {
  it.each([
    ['javascript', V1],
    ['rust', V2],
  ])('the %s test suite vector signs and verifies', (_label, v) => {
    const timestamp = Number(v.timestamp);
    expect(signStandardWebhook({ id: v.id, timestamp, payload: v.payload, secret: v.secret })).toBe(
      v.signature,
    );
    const p = standardWebhooksProvider({ name: 'vendor', secrets: [v.secret], toleranceSeconds: 300 });
    const headers = {
      'webhook-id': v.id,
      'webhook-timestamp': v.timestamp,
      'webhook-signature': v.signature,
    };
    const event = p.verify(request(v.payload, headers), new Date(timestamp * 1000));
    expect(event).toEqual({
      provider: 'vendor',
      eventId: v.id,
      type: 'unknown',
      payloadText: v.payload,
      headers: { 'webhook-id': v.id, 'webhook-timestamp': v.timestamp },
      body: JSON.parse(v.payload) as unknown,
    });
    // The JS suite accepts the secret without its prefix too.
    const bare = standardWebhooksProvider({
      name: 'vendor',
      secrets: [v.secret.slice('whsec_'.length)],
      toleranceSeconds: 300,
    });
    expect(bare.verify(request(v.payload, headers), new Date(timestamp * 1000)).eventId).toBe(v.id);
  });
});

describe('standardWebhooksProvider construction', () => {
  it.each([0, -5, Number.NaN])('refuses tolerance %s', (toleranceSeconds) => {
    expect(() => standardWebhooksProvider({ name: 'svix', secrets: [SECRET], toleranceSeconds })).toThrow(
      RangeError,
    );
  });

  it.each(['', 'Svix', 'my_sender', 'a/b', 'x y'])('refuses the name %j', (name) => {
    expect(() => standardWebhooksProvider({ name, secrets: [SECRET], toleranceSeconds: 300 })).toThrow(
      /name/,
    );
  });

  it.each([
    ['no secret', [], /at least one secret/],
    ['an empty secret', [''], /empty/],
    ['prefix only', ['whsec_'], /base64/],
    ['not base64', ['whsec_not*base64!'], /base64/],
    ['whitespace', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw '], /whitespace/],
  ])('refuses %s', (_label, secrets, message) => {
    expect(() => standardWebhooksProvider({ name: 'svix', secrets, toleranceSeconds: 300 })).toThrow(message);
  });

  it('never echoes a secret in a construction error', () => {
    const secret = 'whsec_not*base64!';
    expect(() =>
      standardWebhooksProvider({ name: 'svix', secrets: [secret], toleranceSeconds: 300 }),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining(secret) as unknown }));
  });
});

describe('standardWebhooksProvider.verify', () => {
  it('event key is the webhook-id; type is the JSON type, else eventType, else "unknown"', () => {
    expect(provider.verify(signed(BODY), NOW)).toMatchObject({
      provider: 'svix',
      eventId: ID,
      type: 'invoice.paid',
    });
    expect(provider.verify(signed('{"eventType":"user.created"}'), NOW).type).toBe('user.created');
    expect(provider.verify(signed('{"type":7,"eventType":"user.created"}'), NOW).type).toBe('user.created');
    expect(provider.verify(signed('{"type":{"a":1}}'), NOW).type).toBe('unknown');
  });

  it('signature header absent or empty → missing_signature', () => {
    const { 'webhook-signature': _, ...rest } = signedHeaders(BODY);
    expect(codeOf(() => provider.verify(request(BODY, rest), NOW))).toBe('missing_signature');
    expect(codeOf(() => provider.verify(request(BODY, { ...rest, 'webhook-signature': '' }), NOW))).toBe(
      'missing_signature',
    );
  });

  it('signature present but id or timestamp absent → invalid_signature (nothing to check it against)', () => {
    const { 'webhook-id': _id, ...noId } = signedHeaders(BODY);
    const { 'webhook-timestamp': _ts, ...noTimestamp } = signedHeaders(BODY);
    expect(codeOf(() => provider.verify(request(BODY, noId), NOW))).toBe('invalid_signature');
    expect(codeOf(() => provider.verify(request(BODY, noTimestamp), NOW))).toBe('invalid_signature');
  });

  const good = signedHeaders(BODY)['webhook-signature'] ?? '';

  it.each([
    ['garbage', 'garbage'],
    ['no version', good.slice(3)],
    ['v1 with nothing', 'v1,'],
    ['partial (first 8 chars)', good.slice(0, 8)],
    ['truncated base64', good.slice(0, -2)],
    ['not base64', 'v1,dawfeoifkpqwoekfpqoekf'],
    ['v1a only (asymmetric, not configured)', `v1a,${good.slice(3)}`],
    ['v2 only', `v2,${good.slice(3)}`],
    ['v0 only', `v0,${good.slice(3)}`],
    ['comma-separated instead of space-separated', `v1,${'A'.repeat(43)}=,${good}`],
  ])('garbled signature header (%s) → invalid_signature', (_label, header) => {
    const headers = { ...signedHeaders(BODY), 'webhook-signature': header };
    expect(codeOf(() => provider.verify(request(BODY, headers), NOW))).toBe('invalid_signature');
  });

  it.each([['hello'], ['1.5e9'], [`${T}.0`], [`-${T}`], [`0${T}`], [' ']])(
    'unusable timestamp %j → invalid_signature',
    (timestamp) => {
      const headers = { ...signedHeaders(BODY), 'webhook-timestamp': timestamp };
      expect(codeOf(() => provider.verify(request(BODY, headers), NOW))).toBe('invalid_signature');
    },
  );

  it('wrong secret → invalid_signature with a helpful message that leaks nothing', () => {
    const headers = signedHeaders(BODY, { secret: OTHER_SECRET });
    let message = '';
    try {
      provider.verify(request(BODY, headers), NOW);
    } catch (error) {
      expect((error as WebhookError).code).toBe('invalid_signature');
      message = (error as Error).message;
    }
    expect(message).toMatch(/raw request body/);
    expect(message).toContain('"svix"');
    expect(message).not.toContain(SECRET.slice(6));
    expect(message).not.toContain(OTHER_SECRET.slice(6));
    expect(message).not.toContain(headers['webhook-signature']?.slice(3));
  });

  it('the id and timestamp are signed: changing either breaks the signature', () => {
    const headers = signedHeaders(BODY);
    expect(codeOf(() => provider.verify(request(BODY, { ...headers, 'webhook-id': 'msg_other' }), NOW))).toBe(
      'invalid_signature',
    );
    expect(
      codeOf(() => provider.verify(request(BODY, { ...headers, 'webhook-timestamp': String(T + 1) }), NOW)),
    ).toBe('invalid_signature');
  });

  it('stale and future timestamps → timestamp_out_of_tolerance; the edges are inside', () => {
    const req = signed(BODY);
    const at = (s: number) => new Date(s * 1000);
    expect(codeOf(() => provider.verify(req, at(T + TOLERANCE)))).toBe('no error');
    expect(codeOf(() => provider.verify(req, at(T - TOLERANCE)))).toBe('no error');
    expect(codeOf(() => provider.verify(req, at(T + TOLERANCE + 1)))).toBe('timestamp_out_of_tolerance');
    expect(codeOf(() => provider.verify(req, at(T - TOLERANCE - 1)))).toBe('timestamp_out_of_tolerance');
    expect(codeOf(() => provider.verify(req, new Date(Number.NaN)))).toBe('timestamp_out_of_tolerance');
  });

  it('checks the signature before the timestamp', () => {
    const stale = signed(BODY, { secret: OTHER_SECRET, timestamp: T - 100_000 });
    expect(codeOf(() => provider.verify(stale, NOW))).toBe('invalid_signature');
  });

  it('multiple signatures: any v1 may match, whatever else is listed (JS suite "multi sig")', () => {
    const headers = signedHeaders(BODY);
    const bogus = 'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';
    const multi = [bogus, 'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=', good, bogus].join(' ');
    expect(provider.verify(request(BODY, { ...headers, 'webhook-signature': multi }), NOW).eventId).toBe(ID);
    const spaced = `v1,garbage  ${good}`;
    expect(provider.verify(request(BODY, { ...headers, 'webhook-signature': spaced }), NOW).eventId).toBe(ID);
  });

  it('rotation: either configured secret verifies', () => {
    const rotating = standardWebhooksProvider({
      name: 'svix',
      secrets: [OTHER_SECRET, SECRET],
      toleranceSeconds: TOLERANCE,
    });
    expect(rotating.verify(signed(BODY, { secret: SECRET }), NOW).eventId).toBe(ID);
    expect(rotating.verify(signed(BODY, { secret: OTHER_SECRET }), NOW).eventId).toBe(ID);
  });

  it('svix-* header names are accepted as aliases, in any case', () => {
    const h = signedHeaders(BODY);
    const svix = {
      'Svix-Id': h['webhook-id'] ?? '',
      'SVIX-TIMESTAMP': h['webhook-timestamp'] ?? '',
      'svix-signature': h['webhook-signature'] ?? '',
    };
    expect(provider.verify(request(BODY, svix), NOW).eventId).toBe(ID);
    const upper = {
      'WEBHOOK-ID': h['webhook-id'] ?? '',
      'Webhook-Timestamp': h['webhook-timestamp'] ?? '',
      'webhook-SIGNATURE': h['webhook-signature'] ?? '',
    };
    expect(provider.verify(request(BODY, upper), NOW).eventId).toBe(ID);
    // A lower-case-only lookup (node:http style) works too.
    expect(provider.verify({ rawBody: Buffer.from(BODY), header: (n) => h[n] }, NOW).eventId).toBe(ID);
  });

  it('a body re-serialized after signing does not verify (the vector with its space removed)', () => {
    const p = standardWebhooksProvider({ name: 'vendor', secrets: [V1.secret], toleranceSeconds: 300 });
    const headers = {
      'webhook-id': V1.id,
      'webhook-timestamp': V1.timestamp,
      'webhook-signature': V1.signature,
    };
    const reserialized = JSON.stringify(JSON.parse(V1.payload));
    expect(reserialized).not.toBe(V1.payload);
    expect(
      codeOf(() => p.verify(request(reserialized, headers), new Date(Number(V1.timestamp) * 1000))),
    ).toBe('invalid_signature');
  });

  it.each([
    ['not JSON', 'hello'],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['empty', ''],
  ])('validly signed body that is %s → invalid_payload', (_label, body) => {
    expect(codeOf(() => provider.verify(signed(body), NOW))).toBe('invalid_payload');
  });

  it('validly signed invalid UTF-8 → invalid_payload', () => {
    expect(codeOf(() => provider.verify(signed(Buffer.from([0x7b, 0x7d, 0x80])), NOW))).toBe(
      'invalid_payload',
    );
  });

  it('a unicode body verifies and its text (and big numbers) are kept exactly', () => {
    const body = '{"type":"ünïcode.✓","name":"日本 😀","n":123456789012345678901234567890}';
    const event = provider.verify(signed(body), NOW);
    expect(event.type).toBe('ünïcode.✓');
    expect(event.payloadText).toBe(body);
    expect(event.payloadText).toContain('123456789012345678901234567890');
  });
});

describe('properties', () => {
  it('random headers and bodies never verify and only ever throw a signature WebhookError', () => {
    const printable = fc.stringMatching(/^[\x21-\x7e]{0,60}$/);
    const signatureish = fc.oneof(
      printable,
      fc
        .array(
          fc.tuple(
            fc.constantFrom('v1', 'v1a', 'v2', ''),
            fc.oneof(fc.base64String({ maxLength: 48 }), printable),
          ),
          { maxLength: 4 },
        )
        .map((parts) => parts.map(([v, s]) => `${v},${s}`).join(' ')),
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            'webhook-id': printable,
            'webhook-timestamp': fc.oneof(fc.constant(String(T)), printable),
            'webhook-signature': signatureish,
          },
          { requiredKeys: [] },
        ),
        fc.uint8Array({ maxLength: 256 }),
        (headers, body) => {
          expect(['missing_signature', 'invalid_signature']).toContain(
            codeOf(() => provider.verify(request(body, headers), NOW)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('any mutation of a signed message (body, id, timestamp, signature) is refused', () => {
    fc.assert(
      fc.property(
        fc.json().filter((j) => j.startsWith('{')),
        fc.stringMatching(/^msg_[A-Za-z0-9]{1,20}$/),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('body', 'id', 'timestamp', 'signature'),
        (body, id, position, xor, what) => {
          const bytes = Buffer.from(body);
          const headers = signedHeaders(bytes, { id });
          expect(provider.verify(request(bytes, headers), NOW).eventId).toBe(id);
          if (what === 'body') {
            const i = position % bytes.length;
            bytes[i] = (bytes[i] ?? 0) ^ xor;
          } else if (what === 'id') {
            headers['webhook-id'] = `${id}x`;
          } else if (what === 'timestamp') {
            headers['webhook-timestamp'] = String(T - 1 - (position % TOLERANCE));
          } else {
            const sig = Buffer.from((headers['webhook-signature'] ?? '').slice(3), 'base64');
            const i = position % sig.length;
            sig[i] = (sig[i] ?? 0) ^ xor;
            headers['webhook-signature'] = `v1,${sig.toString('base64')}`;
          }
          expect(codeOf(() => provider.verify(request(bytes, headers), NOW))).toBe('invalid_signature');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a correctly signed arbitrary body either verifies unchanged or is invalid_payload', () => {
    expectSignedBodiesVerifyOrInvalidPayload(provider, signed, NOW);
  });
});
