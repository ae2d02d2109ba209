import type { Provider } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { bodyString, type CatalogueProviderOptions } from '../signing.ts';
import {
  signTimestampedHmac,
  timestampedHmacProvider,
  type SignTimestampedOptions,
  type TimestampedHmacProvider,
} from '../timestamped-hmac.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const PADDLE_FACTS: ProviderFacts = {
  scheme:
    'Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "<ts>:<raw body>">, keyed with the notification ' +
    "destination's secret key (pdl_ntfset_...); several h1 during a secret rotation",
  eventKey: "the body's event_id (evt_...); refused as invalid_payload when absent",
  eventType: "the body's event_type (transaction.completed)",
  toleranceSeconds: 5,
  retries: 'live: up to 60 retries over 3 days with backoff; sandbox: 3 retries within 15 minutes',
  quirks: "5-second tolerance by default, as Paddle's SDKs; several h1 during a secret rotation",
  requiredOptions: [],
  docs: 'https://developer.paddle.com/webhooks/signature-verification',
};

const SCHEME: TimestampedHmacProvider = {
  header: 'Paddle-Signature',
  separator: ';',
  timestampField: 'ts',
  signatureField: 'h1',
  joiner: ':',
  sender: 'Paddle',
  type: 'paddle',
  toleranceSeconds: PADDLE_FACTS.toleranceSeconds ?? 5,
  identify: (name, body) => ({
    eventId: bodyString(name, body, 'event_id'),
    type: bodyString(name, body, 'event_type'),
  }),
};

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix seconds>;h1=<hex>`, each `h1` the HMAC-SHA256 of `${ts}:${raw body}`
 * keyed with the notification destination's secret key; Paddle sends more than one `h1` while a secret is being
 * rotated, and any may match. The timestamp must be within the tolerance: 5 seconds by default, as Paddle's own
 * SDKs check it (raise it for a receiver whose clock is not tightly synchronised).
 *
 * Event key: the body's `event_id`. Type: its `event_type`, e.g. `subscription.created`.
 *
 * @example
 * const paddle = paddleProvider({ secrets: [process.env.PADDLE_WEBHOOK_SECRET] });
 */
export function paddleProvider(options: CatalogueProviderOptions): Provider {
  return timestampedHmacProvider(SCHEME, options);
}

/** `secret` is the notification destination's secret key. */
export type SignPaddleOptions = SignTimestampedOptions;

/** The `Paddle-Signature` header value Paddle would send for this body, for tests and the dev CLI. */
export function signPaddle(options: SignPaddleOptions): string {
  return signTimestampedHmac(SCHEME, options);
}

/** The catalogue's paddle: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'paddle',
  facts: PADDLE_FACTS,
  create: paddleProvider,
  eventFacts: [
    { label: 'Customer', paths: ['/data/customer_id'] },
    { label: 'Subscription', paths: ['/data/subscription_id'] },
  ],
  subject: ['/data/customer_id', '/data/customer/email', '/data/subscription_id'],
  caseless: { subject: ['/data/customer/email'] },
  excerpt: [
    '/event_id',
    '/event_type',
    '/occurred_at',
    '/notification_id',
    '/data/id',
    '/data/status',
    '/data/customer_id',
    '/data/subscription_id',
    '/data/currency_code',
  ],
};
