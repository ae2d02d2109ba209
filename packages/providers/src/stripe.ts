import type { KeyObject } from 'node:crypto';
import { InvalidPayloadError, InvalidSignatureError, MissingSignatureError } from './errors.ts';
import {
  assertSecrets,
  assertTolerance,
  bytesEqual,
  checkTimestamp,
  decodeHexSha256,
  decodeJsonBody,
  headerValue,
  hmacKey,
  hmacSha256,
  parseUnixSeconds,
  toBytes,
  unixSeconds,
} from './shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from './types.ts';
import type { PayloadPaths } from './catalogue/facts.ts';

export interface StripeProviderOptions {
  /** The source's name, its URL segment and dedupe namespace; default `stripe`. */
  name?: string;
  /** Endpoint secrets (`whsec_...`); more than one during a rotation. Any may match. */
  secrets: readonly string[];
  /** Maximum age (and future skew) of the signed timestamp, in seconds; must be > 0. */
  toleranceSeconds: number;
}

const PROVIDER = 'stripe';

const DOCS_HINT =
  'are you verifying the raw request body (not re-serialized JSON)? ' +
  'is STRIPE_WEBHOOK_SECRET the signing secret of this endpoint (each endpoint, and the Stripe CLI, has its own)?';

/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...][,v0=...]`, each `v1` an HMAC-SHA256 of
 * `${t}.${raw body}` keyed with the whole `whsec_...` string as UTF-8 (the prefix is part of the key, as Stripe
 * does it). Schemes other than `v1` are ignored. Like stripe-node, the signature is checked before the
 * timestamp, so an unsigned request learns nothing about the tolerance; unlike stripe-node, a timestamp too far
 * in the future is refused as well.
 *
 * Event key: the event's `id` (`evt_...`); type: its `type`.
 *
 * @example
 * const stripe = stripeProvider({ secrets: ['whsec_...'], toleranceSeconds: 300 });
 * const event = stripe.verify({ rawBody, header: (name) => request.headers.get(name) }, new Date());
 */
export function stripeProvider(options: StripeProviderOptions): Provider {
  assertSecrets(PROVIDER, options.secrets);
  assertTolerance(PROVIDER, options.toleranceSeconds);
  const keys: readonly KeyObject[] = options.secrets.map((secret) => hmacKey(secret));
  const toleranceSeconds = options.toleranceSeconds;
  const name = options.name ?? PROVIDER;

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const header = headerValue(request.header('stripe-signature'));
      if (header === undefined) {
        throw new MissingSignatureError(
          'stripe: the Stripe-Signature header is absent; is this request really from Stripe?',
        );
      }
      const { timestamp, signatures } = parseSignatureHeader(header);

      const prefix = `${timestamp}.`;
      let matched = false;
      for (const key of keys) {
        const expected = hmacSha256(key, prefix, request.rawBody);
        for (const signature of signatures) {
          if (bytesEqual(expected, signature)) {
            matched = true;
            break;
          }
        }
        if (matched) break;
      }
      if (!matched) {
        throw new InvalidSignatureError(
          `stripe: no v1 signature matched any configured secret; ${DOCS_HINT}`,
        );
      }

      checkTimestamp(PROVIDER, timestamp, now, toleranceSeconds);

      const { text, object } = decodeJsonBody(PROVIDER, request.rawBody);
      const { id, type } = object;
      if (typeof id !== 'string' || id === '') {
        throw new InvalidPayloadError('stripe: the event has no string "id"; is this a Stripe event object?');
      }
      if (typeof type !== 'string' || type === '') {
        throw new InvalidPayloadError(
          'stripe: the event has no string "type"; is this a Stripe event object?',
        );
      }
      return { provider: name, eventId: id, type, payloadText: text, headers: {}, body: object };
    },
  };
}

interface SignatureHeader {
  timestamp: number;
  /** Decoded `v1` signatures; malformed ones are dropped (they could never match). */
  signatures: Buffer[];
}

/** Parses a present header; anything that leaves nothing to verify is an invalid signature, not a missing one. */
function parseSignatureHeader(header: string): SignatureHeader {
  let timestampText: string | undefined;
  let sawTimestamp = false;
  let v1Count = 0;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const scheme = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (scheme === 't') {
      if (sawTimestamp) {
        throw new InvalidSignatureError(
          'stripe: the Stripe-Signature header has more than one timestamp (t=)',
        );
      }
      sawTimestamp = true;
      timestampText = value;
    } else if (scheme === 'v1') {
      v1Count++;
      const signature = decodeHexSha256(value);
      if (signature !== undefined) signatures.push(signature);
    }
  }
  if (timestampText === undefined) {
    throw new InvalidSignatureError(
      'stripe: the Stripe-Signature header has no timestamp (t=); expected "t=<unix seconds>,v1=<hex>"',
    );
  }
  const timestamp = parseUnixSeconds(timestampText);
  if (timestamp === undefined) {
    throw new InvalidSignatureError(
      'stripe: the Stripe-Signature timestamp (t=) is not a unix time in seconds',
    );
  }
  if (v1Count === 0) {
    throw new InvalidSignatureError(
      'stripe: the Stripe-Signature header has no v1 signature (other schemes such as v0 are not accepted)',
    );
  }
  if (signatures.length === 0) {
    throw new InvalidSignatureError(
      'stripe: no v1 signature in the Stripe-Signature header is 64 hex digits',
    );
  }
  return { timestamp, signatures };
}

export interface SignStripeOptions {
  /** The exact body that will be sent. */
  payload: string | Uint8Array;
  /** The endpoint secret, `whsec_...`. */
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/**
 * The `Stripe-Signature` header value Stripe would send for this body, for tests and the dev CLI.
 *
 * @example
 * const body = JSON.stringify({ id: 'evt_1', type: 'checkout.session.completed', object: 'event' });
 * await fetch(url, { method: 'POST', body, headers: { 'stripe-signature': signStripe({ payload: body, secret }) } });
 */
export function signStripe({ payload, secret, timestamp = unixSeconds() }: SignStripeOptions): string {
  const t = Math.floor(timestamp);
  const signature = hmacSha256(hmacKey(secret), `${t}.`, toBytes(payload)).toString('hex');
  return `t=${t},v1=${signature}`;
}

/** Stripe's paths into an event (`PayloadPaths`): its connected account, and the customer the object is about. */
export const STRIPE_PATHS: PayloadPaths = {
  eventFacts: [
    { label: 'Connected account', paths: ['/account'] },
    { label: 'Live mode', paths: ['/livemode'] },
  ],
  subject: [
    '/data/object/customer',
    '/data/object/customer/id',
    '/data/object/customer_email',
    '/data/object/customer_details/email',
    '/data/object/receipt_email',
    '/data/object/billing_details/email',
  ],
  caseless: {
    subject: [
      '/data/object/customer_email',
      '/data/object/customer_details/email',
      '/data/object/receipt_email',
      '/data/object/billing_details/email',
    ],
  },
};
