import { InvalidPayloadError, InvalidSignatureError } from '../../errors.ts';
import { assertSecrets, decodeJsonBody } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { signatureHeader, sourceName, tokenMatches, type CatalogueProviderOptions } from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const POSTMARK_FACTS: ProviderFacts = {
  scheme:
    'HTTP Basic Auth: the webhook URL carries user:password (https://user:password@host/...), sent as ' +
    'Authorization: Basic; the secret is "user:password"; nothing is signed',
  eventKey:
    'built from the body: RecordType, the bounce or complaint ID (else the MessageID), the Recipient and the ' +
    'event time (DeliveredAt, ReceivedAt or ChangedAt), e.g. "Delivery:<MessageID>:<Recipient>:<DeliveredAt>"; ' +
    'an inbound message is "Inbound:<MessageID>"; refused as invalid_payload without an ID or MessageID',
  eventType:
    "the body's RecordType (Bounce, Delivery, Open, Click, SpamComplaint, SubscriptionChange), Inbound",
  toleranceSeconds: undefined,
  retries:
    'bounce and inbound webhooks: up to 10 retries growing from 1 minute to 6 hours (about 10 hours); the other ' +
    'webhooks fewer; a 403 stops the retries',
  quirks:
    'nothing signed; no event id, so the key is built per record type; bounce ids exceed 2^53 and are read exactly',
  requiredOptions: [],
  docs: 'https://postmarkapp.com/developer/webhooks/webhooks-overview',
};

/** Fields naming when an event happened, by record type; the first present one is part of the key. */
const WHEN = ['DeliveredAt', 'ReceivedAt', 'ChangedAt', 'BouncedAt'] as const;

/**
 * Postmark: webhooks are authenticated by HTTP Basic Auth credentials written into the webhook URL; each
 * configured secret is one `user:password` pair, compared in constant time with the decoded `Authorization`
 * header. Postmark signs nothing, so a body is as trustworthy as the TLS connection that carried it.
 *
 * Event key: Postmark sends no event id; the key is built from what identifies the event in its record type:
 * `RecordType`, the `ID` (bounces, spam complaints) or `MessageID`, the `Recipient` and the event's time.
 * Type: `RecordType`, or `Inbound` for an inbound message (which has none).
 *
 * @example
 * const postmark = postmarkProvider({ secrets: ['postmark:long-random-password'] });
 */
export function postmarkProvider(options: CatalogueProviderOptions): Provider {
  const name = sourceName('postmark', options.name);
  assertSecrets(name, options.secrets);
  options.secrets.forEach((secret, index) => {
    if (!secret.includes(':')) throw new TypeError(`${name}: secret #${index + 1} must be "user:password"`);
  });
  const secrets = [...options.secrets];

  return {
    name,
    verify(request: SignedRequest): VerifiedEvent {
      const authorization = signatureHeader(name, request, 'authorization', 'Postmark');
      const match = /^Basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(authorization);
      const credentials = match?.[1] === undefined ? '' : Buffer.from(match[1], 'base64').toString('utf8');
      if (!tokenMatches(credentials, secrets)) {
        throw new InvalidSignatureError(
          `${name}: the Basic Auth credentials match no configured "user:password"; ` +
            `are they the ones in the webhook URL configured in Postmark for "${name}"?`,
        );
      }
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const kind =
        typeof object.RecordType === 'string' && object.RecordType !== '' ? object.RecordType : 'Inbound';
      const id = exactId(text, object.ID) ?? object.MessageID;
      if ((typeof id !== 'string' || id === '') && !Number.isSafeInteger(id)) {
        throw new InvalidPayloadError(
          `${name}: the body has neither an ID nor a MessageID to key the event by`,
        );
      }
      const parts = [kind, String(id)];
      if (typeof object.Recipient === 'string' && object.Recipient !== '') parts.push(object.Recipient);
      const when = WHEN.map((field) => object[field]).find(
        (value) => typeof value === 'string' && value !== '',
      );
      if (typeof when === 'string') parts.push(when);
      return {
        provider: name,
        eventId: parts.join(':'),
        type: kind,
        payloadText: text,
        headers: {},
        body: object,
      };
    },
  };
}

/**
 * A bounce's `ID` exactly as written: Postmark's bounce ids exceed 2^53 (its own example is 4323372036854775807),
 * which `JSON.parse` rounds, and two bounces would then share a key. Such an id is read again from its source text.
 */
function exactId(text: string, id: unknown): unknown {
  if (typeof id !== 'number' || Number.isSafeInteger(id)) return id;
  const exact = JSON.parse(text, (key, value: unknown, context?: { source?: string }) =>
    key === 'ID' && typeof value === 'number' && context?.source !== undefined ? context.source : value,
  ) as Record<string, unknown>;
  return exact.ID;
}

/** The `Authorization` header Postmark sends for credentials `user:password` in the webhook URL. */
export function signPostmark({ secret }: { secret: string }): string {
  return `Basic ${Buffer.from(secret, 'utf8').toString('base64')}`;
}

/** The catalogue's postmark: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'postmark',
  facts: POSTMARK_FACTS,
  create: postmarkProvider,
  subject: ['/Recipient', '/Email', '/MessageID'],
  caseless: { subject: ['/Recipient', '/Email'] },
};
