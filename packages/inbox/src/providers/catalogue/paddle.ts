import { checkTimestamp, decodeJsonBody, hmacKey, toBytes, unixSeconds } from '../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../types.ts';
import type { ProviderFacts } from './facts.ts';
import {
  anyKeyMatches,
  bodyString,
  hmac,
  noMatch,
  parseTimestampedHeader,
  secretKeys,
  signatureHeader,
  sourceName,
  tolerance,
  type CatalogueProviderOptions,
} from './signing.ts';

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

const LAYOUT = { header: 'Paddle-Signature', separator: ';', timestampField: 'ts', signatureField: 'h1' };

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
  const name = sourceName('paddle', options.name);
  const keys = secretKeys(name, options.secrets);
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, PADDLE_FACTS.toleranceSeconds ?? 5);

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const header = signatureHeader(name, request, 'paddle-signature', 'Paddle');
      const { timestamp, signatures } = parseTimestampedHeader(name, header, LAYOUT);
      if (!anyKeyMatches('sha256', keys, [`${timestamp}:`, request.rawBody], signatures)) {
        throw noMatch(name, 'no h1 signature');
      }
      checkTimestamp(name, timestamp, now, toleranceSeconds);

      const { text, object } = decodeJsonBody(name, request.rawBody);
      return {
        provider: name,
        eventId: bodyString(name, object, 'event_id'),
        type: bodyString(name, object, 'event_type'),
        payloadText: text,
        headers: {},
      };
    },
  };
}

export interface SignPaddleOptions {
  /** The exact body that will be sent. */
  payload: string | Uint8Array;
  /** The notification destination's secret key. */
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

/** The `Paddle-Signature` header value Paddle would send for this body, for tests and the dev CLI. */
export function signPaddle({ payload, secret, timestamp = unixSeconds() }: SignPaddleOptions): string {
  const ts = Math.floor(timestamp);
  return `ts=${ts};h1=${hmac('sha256', hmacKey(secret), [`${ts}:`, toBytes(payload)]).toString('hex')}`;
}
