import { checkTimestamp, decodeJsonBody, hmacKey, toBytes } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { CatalogueDefinition } from '../definition.ts';
import type { ProviderFacts } from '../facts.ts';
import { hmacOf } from '../../signature-kernel.ts';
import {
  bodyString,
  checkHmac,
  hmacSource,
  signatureHeader,
  signedTimestampHeader,
  type CatalogueProviderOptions,
} from '../signing.ts';

export const CUSTOMERIO_FACTS: ProviderFacts = {
  scheme:
    'X-CIO-Signature: <hex HMAC-SHA256 of "v0:<X-CIO-Timestamp>:<raw body>">, keyed with the webhook signing ' +
    'key (Reporting Webhooks integration page)',
  eventKey: "the body's event_id (kept by retries); refused as invalid_payload when absent",
  eventType: 'the body\'s object_type, "." and its metric (email.opened, sms.delivered, ...)',
  toleranceSeconds: 300,
  retries:
    'when not answered 2xx within 4 seconds: retried with exponential backoff for 7 days, later calls ' +
    'backlogged behind the failing one; a 4xx or 5xx answer waits one hour before the first retry',
  quirks:
    'no "v0=" prefix on the signature although the signed text starts with "v0:"; Customer.io documents no ' +
    'tolerance (5 minutes here, as for the other v0 signers); a failing call holds back every later one',
  requiredOptions: [],
  docs: 'https://docs.customer.io/api/webhooks/',
};

const SIGNATURE = 'x-cio-signature';
const TIMESTAMP = 'x-cio-timestamp';

/** `v0:<timestamp>:` then the body: what Customer.io signs. */
const signedParts = (timestamp: string, body: Uint8Array) => [`v0:${timestamp}:`, body];

/**
 * Customer.io (Journeys reporting webhooks): `X-CIO-Signature` is the hex HMAC-SHA256 of
 * `v0:<X-CIO-Timestamp>:<raw body>` keyed with the signing key; the timestamp must be within 5 minutes. The body's
 * `event_id` is the key, its `object_type` and `metric` the type (`email.opened`).
 */
export function customerioProvider(options: CatalogueProviderOptions): Provider {
  const { name, keys, toleranceSeconds } = hmacSource('customerio', options, 300);
  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const signature = signatureHeader(name, request, SIGNATURE, 'Customer.io');
      const { text, value } = signedTimestampHeader(name, request, TIMESTAMP);
      checkHmac(
        name,
        keys,
        signedParts(text, request.rawBody),
        signature,
        'X-CIO-Signature',
        'sha256',
        'hex',
      );
      checkTimestamp(name, value, now, toleranceSeconds);
      const body = decodeJsonBody(name, request.rawBody);
      const objectType = bodyString(name, body.object, 'object_type');
      return {
        provider: name,
        eventId: bodyString(name, body.object, 'event_id'),
        type: `${objectType}.${bodyString(name, body.object, 'metric')}`,
        payloadText: body.text,
        headers: {},
        body: body.object,
      };
    },
  };
}

/** The `X-CIO-Signature` and `X-CIO-Timestamp` headers Customer.io would send for this body (tests, `send`). */
export function signCustomerio(options: {
  payload: string | Uint8Array;
  secret: string;
  /** Unix seconds. */
  timestamp: number;
}): Record<string, string> {
  const t = String(Math.floor(options.timestamp));
  const signature = hmacOf('sha256', hmacKey(options.secret), signedParts(t, toBytes(options.payload)));
  return { [SIGNATURE]: signature.toString('hex'), [TIMESTAMP]: t };
}

/** The catalogue's customerio: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'customerio',
  facts: CUSTOMERIO_FACTS,
  create: customerioProvider,
};
