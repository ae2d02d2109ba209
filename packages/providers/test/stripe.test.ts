import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { signStripe, stripeProvider } from '../src/stripe.ts';
import type { SignedRequest } from '../src/types.ts';
import { codeOf, expectSignedBodiesVerifyOrInvalidPayload } from './catalogue/support.ts';

const SECRET = 'whsec_test_secret_0123456789abcdef';
const OTHER_SECRET = 'whsec_rotated_secret_fedcba9876543210';
const T = 1_700_000_000;
const NOW = new Date(T * 1000);
const TOLERANCE = 300;
const BODY = '{"id":"evt_1","object":"event","type":"checkout.session.completed","data":{"object":{}}}';

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../../../test/fixtures/stripe/${name}`, import.meta.url));

/** Like the receiver: a WHATWG Headers lookup, case-insensitive. */
function request(body: string | Uint8Array, headers: Record<string, string>): SignedRequest {
  const h = new Headers(headers);
  return { rawBody: typeof body === 'string' ? Buffer.from(body) : body, header: (name) => h.get(name) };
}

function signed(
  body: string | Uint8Array,
  opts: { secret?: string; timestamp?: number } = {},
): SignedRequest {
  const header = signStripe({ payload: body, secret: opts.secret ?? SECRET, timestamp: opts.timestamp ?? T });
  return request(body, { 'Stripe-Signature': header });
}

const provider = stripeProvider({ secrets: [SECRET], toleranceSeconds: TOLERANCE });

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('stripeProvider construction', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses tolerance %s', (toleranceSeconds) => {
    expect(() => stripeProvider({ secrets: [SECRET], toleranceSeconds })).toThrow(RangeError);
  });

  it('refuses no secret, an empty secret, and a secret with whitespace', () => {
    expect(() => stripeProvider({ secrets: [], toleranceSeconds: 300 })).toThrow(/at least one secret/);
    expect(() => stripeProvider({ secrets: [''], toleranceSeconds: 300 })).toThrow(/empty/);
    expect(() => stripeProvider({ secrets: [`${SECRET}\n`], toleranceSeconds: 300 })).toThrow(/whitespace/);
  });
});

describe('stripeProvider.verify', () => {
  it('accepts a signed event: key is the id, type the type, payloadText the body unchanged', () => {
    const event = provider.verify(signed(BODY), NOW);
    expect(event).toEqual({
      provider: 'stripe',
      eventId: 'evt_1',
      type: 'checkout.session.completed',
      payloadText: BODY,
      headers: {},
      body: JSON.parse(BODY) as unknown,
    });
  });

  it.each([
    'checkout.session.completed.json',
    'customer.subscription.created.json',
    'customer.subscription.updated.json',
    'customer.subscription.deleted.json',
    'invoice.paid.json',
  ])('accepts the %s fixture byte for byte', (name) => {
    const bytes = fixture(name);
    const parsed = JSON.parse(bytes.toString('utf8')) as { id: string; type: string };
    const event = provider.verify(signed(bytes), NOW);
    expect(event.eventId).toBe(parsed.id);
    expect(event.type).toBe(parsed.type);
    expect(event.payloadText).toBe(bytes.toString('utf8'));
  });

  it('missing or empty header → missing_signature', () => {
    expect(codeOf(() => provider.verify(request(BODY, {}), NOW))).toBe('missing_signature');
    expect(codeOf(() => provider.verify(request(BODY, { 'stripe-signature': '' }), NOW))).toBe(
      'missing_signature',
    );
    expect(codeOf(() => provider.verify(request(BODY, { 'stripe-signature': '   ' }), NOW))).toBe(
      'missing_signature',
    );
  });

  const good = signStripe({ payload: BODY, secret: SECRET, timestamp: T });
  const v1 = good.split(',v1=')[1] ?? '';

  it.each([
    ['garbage', 'not a signature'],
    ['no t', `v1=${v1}`],
    ['empty t', `t=,v1=${v1}`],
    ['non-numeric t', `t=abc,v1=${v1}`],
    ['fractional t', `t=${T}.5,v1=${v1}`],
    ['negative t', `t=-${T},v1=${v1}`],
    ['two t', `t=${T},t=${T},v1=${v1}`],
    ['no v1', `t=${T}`],
    ['v1 empty', `t=${T},v1=`],
    ['v1 not hex', `t=${T},v1=${'z'.repeat(64)}`],
    ['v1 truncated', `t=${T},v1=${v1.slice(0, 63)}`],
    ['v1 too long', `t=${T},v1=${v1}0`],
    ['v0 only', `t=${T},v0=${v1}`],
    ['v2 only', `t=${T},v2=${v1}`],
    ['separators only', ',,,=,=='],
  ])('garbled header (%s) → invalid_signature', (_label, header) => {
    expect(codeOf(() => provider.verify(request(BODY, { 'stripe-signature': header }), NOW))).toBe(
      'invalid_signature',
    );
  });

  it('wrong secret → invalid_signature, with a message that helps and leaks nothing', () => {
    const req = signed(BODY, { secret: OTHER_SECRET });
    expect(codeOf(() => provider.verify(req, NOW))).toBe('invalid_signature');
    const message = messageOf(() => provider.verify(req, NOW));
    expect(message).toMatch(/raw request body/);
    expect(message).toMatch(/STRIPE_WEBHOOK_SECRET/);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain(OTHER_SECRET);
    expect(message).not.toContain(req.header('stripe-signature')?.split('v1=')[1]);
  });

  it('stale and future timestamps → timestamp_out_of_tolerance; the edges are inside', () => {
    const req = signed(BODY);
    const at = (seconds: number) => new Date(seconds * 1000);
    expect(codeOf(() => provider.verify(req, at(T + TOLERANCE)))).toBe('no error');
    expect(codeOf(() => provider.verify(req, at(T - TOLERANCE)))).toBe('no error');
    expect(codeOf(() => provider.verify(req, at(T + TOLERANCE + 1)))).toBe('timestamp_out_of_tolerance');
    expect(codeOf(() => provider.verify(req, at(T - TOLERANCE - 1)))).toBe('timestamp_out_of_tolerance');
    expect(codeOf(() => provider.verify(req, at(T + 86_400 * 365)))).toBe('timestamp_out_of_tolerance');
  });

  it('checks the signature before the timestamp (a forger learns nothing about the window)', () => {
    const stale = signed(BODY, { secret: OTHER_SECRET, timestamp: T - 10_000 });
    expect(codeOf(() => provider.verify(stale, NOW))).toBe('invalid_signature');
  });

  it('an invalid clock fails closed', () => {
    expect(codeOf(() => provider.verify(signed(BODY), new Date(Number.NaN)))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('a changed timestamp breaks the signature', () => {
    const header = signStripe({ payload: BODY, secret: SECRET, timestamp: T }).replace(
      `t=${T}`,
      `t=${T + 1}`,
    );
    expect(codeOf(() => provider.verify(request(BODY, { 'stripe-signature': header }), NOW))).toBe(
      'invalid_signature',
    );
  });

  it('an extra bogus v1 alongside the good one, before or after, still verifies; v0 is ignored', () => {
    const bogus = 'f'.repeat(64);
    for (const header of [
      `t=${T},v1=${bogus},v1=${v1}`,
      `t=${T},v1=${v1},v1=${bogus}`,
      `t=${T},v0=${bogus},v1=${v1}`,
      `v1=${v1},t=${T}`,
      `t=${T},v1=not-hex,v1=${v1}`,
      `t=${T}, v1=${v1}`,
      `t=${T},v1=${v1.toUpperCase()}`,
    ]) {
      expect(provider.verify(request(BODY, { 'stripe-signature': header }), NOW).eventId).toBe('evt_1');
    }
  });

  it('rotation: either configured secret verifies', () => {
    const rotating = stripeProvider({ secrets: [OTHER_SECRET, SECRET], toleranceSeconds: TOLERANCE });
    expect(rotating.verify(signed(BODY, { secret: SECRET }), NOW).eventId).toBe('evt_1');
    expect(rotating.verify(signed(BODY, { secret: OTHER_SECRET }), NOW).eventId).toBe('evt_1');
    // Stripe itself sends one v1 per active secret during a roll.
    const a = signStripe({ payload: BODY, secret: 'whsec_gone', timestamp: T });
    const b = signStripe({ payload: BODY, secret: SECRET, timestamp: T });
    const both = `${a},v1=${b.split('v1=')[1] ?? ''}`;
    expect(provider.verify(request(BODY, { 'stripe-signature': both }), NOW).eventId).toBe('evt_1');
  });

  it('a body re-serialized after signing does not verify', () => {
    const pretty = fixture('checkout.session.completed.json').toString('utf8');
    const compact = JSON.stringify(JSON.parse(pretty));
    const header = signStripe({ payload: pretty, secret: SECRET, timestamp: T });
    expect(codeOf(() => provider.verify(request(compact, { 'stripe-signature': header }), NOW))).toBe(
      'invalid_signature',
    );
  });

  it.each([
    ['not JSON', 'hello'],
    ['truncated JSON', '{"id":"evt_1",'],
    ['a JSON array', '[{"id":"evt_1","type":"x"}]'],
    ['a JSON string', '"evt_1"'],
    ['JSON null', 'null'],
    ['no id', '{"type":"checkout.session.completed"}'],
    ['numeric id', '{"id":1,"type":"checkout.session.completed"}'],
    ['empty id', '{"id":"","type":"checkout.session.completed"}'],
    ['no type', '{"id":"evt_1"}'],
    ['a byte-order mark', '\uFEFF{"id":"evt_1","type":"x"}'],
  ])('validly signed but %s → invalid_payload', (_label, body) => {
    expect(codeOf(() => provider.verify(signed(body), NOW))).toBe('invalid_payload');
  });

  it('validly signed empty body → invalid_payload', () => {
    expect(codeOf(() => provider.verify(signed(new Uint8Array(0)), NOW))).toBe('invalid_payload');
  });

  it('validly signed invalid UTF-8 → invalid_payload', () => {
    const body = Buffer.concat([
      Buffer.from('{"id":"evt_1","type":"x","s":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ]);
    expect(codeOf(() => provider.verify(signed(body), NOW))).toBe('invalid_payload');
  });

  it('an invalid UTF-8 body with a wrong signature is a signature error (nothing is decoded first)', () => {
    const body = Buffer.from([0xff, 0xfe, 0xfd]);
    const header = signStripe({ payload: 'something else', secret: SECRET, timestamp: T });
    expect(codeOf(() => provider.verify(request(body, { 'stripe-signature': header }), NOW))).toBe(
      'invalid_signature',
    );
  });

  it('a unicode body verifies and its text is kept exactly', () => {
    const body = '{"id":"evt_ü","type":"customer.updated","name":"Zoë 😀 日本","esc":"\\u00e9"}';
    const event = provider.verify(signed(body), NOW);
    expect(event.eventId).toBe('evt_ü');
    expect(event.payloadText).toBe(body);
  });

  it('numbers beyond 2^53 survive in payloadText', () => {
    const body = '{"id":"evt_big","type":"x","amount":12345678901234567890,"n":9007199254740993}';
    const event = provider.verify(signed(body), NOW);
    expect(event.payloadText).toContain('12345678901234567890');
    expect(event.payloadText).toContain('9007199254740993');
  });

  it('header names are case-insensitive (any casing; a lower-case-only lookup works too)', () => {
    const header = signStripe({ payload: BODY, secret: SECRET, timestamp: T });
    for (const name of ['Stripe-Signature', 'stripe-signature', 'STRIPE-SIGNATURE', 'sTrIpE-sIgNaTuRe']) {
      expect(provider.verify(request(BODY, { [name]: header }), NOW).eventId).toBe('evt_1');
    }
    // node:http lower-cases header names: the provider asks in lower case.
    const nodeStyle: Record<string, string> = { 'stripe-signature': header };
    expect(provider.verify({ rawBody: Buffer.from(BODY), header: (n) => nodeStyle[n] }, NOW).eventId).toBe(
      'evt_1',
    );
  });
});

describe('agreement with the official stripe package', () => {
  const stripe = new Stripe('sk_test_x');
  const tolerance = TOLERANCE;

  it("stripe's generateTestHeaderString verifies here", () => {
    const body = fixture('customer.subscription.updated.json').toString('utf8');
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T });
    expect(provider.verify(request(body, { 'stripe-signature': header }), NOW).type).toBe(
      'customer.subscription.updated',
    );
    const wrong = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: OTHER_SECRET,
      timestamp: T,
    });
    expect(codeOf(() => provider.verify(request(body, { 'stripe-signature': wrong }), NOW))).toBe(
      'invalid_signature',
    );
  });

  it('signStripe verifies with stripe.webhooks.constructEvent (injected receivedAt and tolerance)', () => {
    const body = fixture('checkout.session.completed.json').toString('utf8');
    const header = signStripe({ payload: body, secret: SECRET, timestamp: T });
    expect(header).toBe(
      stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T }),
    );
    const event = stripe.webhooks.constructEvent(body, header, SECRET, tolerance, undefined, T * 1000);
    expect(event.id).toBe('evt_T8nSaZqtPudigUMqnnbY4D4v');
    expect(() =>
      stripe.webhooks.constructEvent(body, header, SECRET, tolerance, undefined, (T + tolerance + 1) * 1000),
    ).toThrow(/tolerance/);
    expect(() =>
      stripe.webhooks.constructEvent(body, header, OTHER_SECRET, tolerance, undefined, T * 1000),
    ).toThrow(/No signatures found/);
  });

  it('signing raw bytes and signing the same text agree', () => {
    const body = '{"id":"evt_ü","type":"x"}';
    expect(signStripe({ payload: Buffer.from(body), secret: SECRET, timestamp: T })).toBe(
      stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T }),
    );
  });
});

describe('properties', () => {
  const SIGNATURE_CODES = ['missing_signature', 'invalid_signature'];
  const headerish = fc.oneof(
    fc.string(),
    fc.stringMatching(
      /^(t=\d{0,12}|v[01]=[0-9a-f]{0,64}|[a-z0-9]{0,4}=?[ -~]{0,8})(,(t=\d{0,12}|v[01]=[0-9a-f]{0,64})){0,4}$/,
    ),
    fc.constantFrom(`t=${T},v1=${'0'.repeat(64)}`, `t=${T},v0=${'a'.repeat(64)}`),
  );

  it('random headers and bodies never verify and only ever throw a signature WebhookError', () => {
    fc.assert(
      fc.property(
        fc.option(headerish, { nil: undefined }),
        fc.uint8Array({ maxLength: 256 }),
        (header, body) => {
          const req = request(body, header === undefined ? {} : { 'stripe-signature': header });
          expect(SIGNATURE_CODES).toContain(codeOf(() => provider.verify(req, NOW)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('any mutation of a signed request (body byte, timestamp, signature) is refused', () => {
    const event = fc
      .record({ id: fc.string({ minLength: 1 }), type: fc.string({ minLength: 1 }), data: fc.jsonValue() })
      .map((value) => JSON.stringify(value));
    fc.assert(
      fc.property(
        event,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('body', 'timestamp', 'signature'),
        (body, position, xor, what) => {
          const bytes = Buffer.from(body);
          let header = signStripe({ payload: bytes, secret: SECRET, timestamp: T });
          expect(provider.verify(request(bytes, { 'stripe-signature': header }), NOW).payloadText).toBe(body);
          if (what === 'body') {
            const i = position % bytes.length;
            bytes[i] = (bytes[i] ?? 0) ^ xor;
          } else if (what === 'timestamp') {
            header = header.replace(`t=${T}`, `t=${T + 1 + (position % TOLERANCE)}`);
          } else {
            const sig = header.split('v1=')[1] ?? '';
            const i = position % sig.length;
            const flipped = (parseInt(sig[i] ?? '0', 16) ^ (1 + (xor % 15))).toString(16);
            header = `t=${T},v1=${sig.slice(0, i)}${flipped}${sig.slice(i + 1)}`;
          }
          expect(codeOf(() => provider.verify(request(bytes, { 'stripe-signature': header }), NOW))).toBe(
            'invalid_signature',
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a correctly signed arbitrary body either verifies unchanged or is invalid_payload', () => {
    expectSignedBodiesVerifyOrInvalidPayload(provider, signed, NOW);
  });
});
