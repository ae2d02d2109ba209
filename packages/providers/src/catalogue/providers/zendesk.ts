import { InvalidSignatureError } from '../../errors.ts';
import { checkTimestamp, decodeJsonBody, hmacKey, toBytes } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { hmacOf } from '../../signature-kernel.ts';
import {
  checkHmac,
  hmacSource,
  keptHeaders,
  requiredHeader,
  signatureHeader,
  type CatalogueProviderOptions,
} from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const ZENDESK_FACTS: ProviderFacts = {
  scheme:
    'X-Zendesk-Webhook-Signature: <base64 HMAC-SHA256 of timestamp + raw body>, the timestamp being ' +
    "X-Zendesk-Webhook-Signature-Timestamp (ISO 8601) and the key the webhook's signing secret",
  eventKey:
    'X-Zendesk-Webhook-Invocation-Id (one invocation, whatever its attempts); refused as invalid_payload when ' +
    'absent',
  eventType:
    "the body's type for event-subscribed webhooks (zen:event-type:ticket.created); trigger and automation " +
    'webhooks, whose body the admin writes, are typed "trigger"',
  toleranceSeconds: 300,
  retries:
    'up to 3 retries for 409, and for 429 and 503 with a Retry-After under 60 seconds; a circuit breaker pauses ' +
    'a webhook whose requests keep failing',
  quirks:
    'the signed timestamp is ISO 8601 and concatenated to the body without a separator; trigger webhooks carry an admin-written body',
  requiredOptions: [],
  docs: 'https://developer.zendesk.com/documentation/webhooks/verifying/',
};

/** An ISO 8601 instant in UTC as Zendesk writes it, to the second (fractions allowed). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/**
 * Zendesk: `X-Zendesk-Webhook-Signature` is the base64 HMAC-SHA256 of the `X-Zendesk-Webhook-Signature-Timestamp`
 * value (ISO 8601, e.g. `2021-03-25T05:09:27Z`) followed directly by the raw body, keyed with the webhook's
 * signing secret. Zendesk documents no tolerance; 5 minutes is applied by default.
 *
 * Event key: `X-Zendesk-Webhook-Invocation-Id`. Type: the body's `type` (event-subscribed webhooks, e.g.
 * `zen:event-type:ticket.created`), else `trigger` (trigger and automation webhooks carry a body of the admin's
 * making, which must still be a JSON object).
 *
 * @example
 * const zendesk = zendeskProvider({ secrets: [process.env.ZENDESK_WEBHOOK_SECRET] });
 */
export function zendeskProvider(options: CatalogueProviderOptions): Provider {
  const { name, keys, toleranceSeconds } = hmacSource(
    'zendesk',
    options,
    ZENDESK_FACTS.toleranceSeconds ?? 300,
  );

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const header = signatureHeader(name, request, 'x-zendesk-webhook-signature', 'Zendesk');
      const timestampText = requiredSignedTimestamp(name, request);
      checkHmac(name, keys, [timestampText, request.rawBody], header, 'X-Zendesk-Webhook-Signature');
      checkTimestamp(name, Math.floor(Date.parse(timestampText) / 1000), now, toleranceSeconds);

      const invocation = requiredHeader(
        name,
        request,
        'x-zendesk-webhook-invocation-id',
        'it is the event key',
      );
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const type = typeof object.type === 'string' && object.type !== '' ? object.type : 'trigger';
      return {
        provider: name,
        eventId: invocation,
        type,
        payloadText: text,
        headers: keptHeaders(request, ['x-zendesk-account-id', 'x-zendesk-webhook-id']),
        body: object,
      };
    },
  };
}

function requiredSignedTimestamp(name: string, request: SignedRequest): string {
  const value = request.header('x-zendesk-webhook-signature-timestamp')?.trim();
  if (value === undefined || value === '' || !ISO_INSTANT.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidSignatureError(
      `${name}: X-Zendesk-Webhook-Signature-Timestamp is absent or not an ISO 8601 UTC instant`,
    );
  }
  return value;
}

export interface SignZendeskOptions {
  payload: string | Uint8Array;
  /** The webhook's signing secret. */
  secret: string;
  /** The X-Zendesk-Webhook-Signature-Timestamp value, e.g. `2021-03-25T05:09:27Z`. */
  timestamp: string;
}

/** The `X-Zendesk-Webhook-Signature` value Zendesk would send with this timestamp and body. */
export function signZendesk({ payload, secret, timestamp }: SignZendeskOptions): string {
  return hmacOf('sha256', hmacKey(secret), [timestamp, toBytes(payload)]).toString('base64');
}

/** The catalogue's zendesk: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'zendesk',
  facts: ZENDESK_FACTS,
  create: zendeskProvider,
  eventFacts: [{ label: 'Account', paths: ['/account_id'] }],
  subject: ['/detail/id', '/detail/requester_id'],
  excerpt: ['/type', '/id', '/time', '/account_id', '/detail/id'],
};
