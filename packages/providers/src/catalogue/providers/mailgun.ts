import { InvalidSignatureError, MissingSignatureError } from '../../errors.ts';
import { checkTimestamp, decodeJsonBody, hmacKey, parseUnixSeconds, unixSeconds } from '../../shared.ts';
import type { Provider, SignedRequest, VerifiedEvent } from '../../types.ts';
import type { ProviderFacts } from '../facts.ts';
import { hmacOf } from '../../signature-kernel.ts';
import {
  partsMatch,
  bodyObject,
  bodyString,
  decodeDigest,
  hmacSource,
  noMatch,
  type CatalogueProviderOptions,
} from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const MAILGUN_FACTS: ProviderFacts = {
  scheme:
    'in the body: signature.signature = <hex HMAC-SHA256 of signature.timestamp + signature.token>, keyed with ' +
    'the HTTP webhook signing key; the event data itself is NOT signed',
  eventKey: "the body's event-data.id; refused as invalid_payload when absent",
  eventType: "the body's event-data.event (delivered, failed, opened, clicked, complained, unsubscribed)",
  toleranceSeconds: 300,
  retries:
    'for 8 hours, at 5 minutes, 10 minutes, 15 minutes, 1 hour, 2 hours and 4 hours; a 406 stops the retries, ' +
    'any other non-2xx continues them',
  quirks:
    'the signature is inside the body and covers only timestamp + token, not the event data; the body is parsed before the check',
  requiredOptions: [],
  docs: 'https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks',
};

/**
 * Mailgun: the signature travels inside the JSON body, `{"signature": {"timestamp", "token", "signature"},
 * "event-data": {...}}`, where `signature` is the hex HMAC-SHA256 of `timestamp` followed by `token`, keyed with
 * the HTTP webhook signing key. Mailgun signs only that pair, never the event data: anyone holding one authentic
 * signature block can pair it with another body while the timestamp is within the tolerance (5 minutes by
 * default, as Mailgun advises checking freshness). Redeliveries of one event share its `event-data.id`, so a
 * replay inside the window is at worst a duplicate of a real event, and a forged new id is accepted; keep the
 * tolerance short for that reason.
 *
 * Because the signature is inside the body, the body is parsed before it is verified (as JSON only; nothing
 * from it is used until the signature matches).
 *
 * Event key: `event-data.id`. Type: `event-data.event`, e.g. `delivered`.
 *
 * @example
 * const mailgun = mailgunProvider({ secrets: [process.env.MAILGUN_WEBHOOK_SECRET] });
 */
export function mailgunProvider(options: CatalogueProviderOptions): Provider {
  const { name, keys, toleranceSeconds } = hmacSource(
    'mailgun',
    options,
    MAILGUN_FACTS.toleranceSeconds ?? 300,
  );

  return {
    name,
    verify(request: SignedRequest, now: Date): VerifiedEvent {
      const { text, object } = decodeJsonBody(name, request.rawBody);
      const block = object.signature;
      if (typeof block !== 'object' || block === null || Array.isArray(block)) {
        throw new MissingSignatureError(
          `${name}: the body has no "signature" object; is this a Mailgun webhook?`,
        );
      }
      const { timestamp: timestampText, token, signature: signatureText } = block as Record<string, unknown>;
      if (
        typeof timestampText !== 'string' ||
        typeof token !== 'string' ||
        typeof signatureText !== 'string'
      ) {
        throw new InvalidSignatureError(
          `${name}: signature.timestamp, .token and .signature must be strings`,
        );
      }
      const timestamp = parseUnixSeconds(timestampText);
      const signature = decodeDigest(signatureText, 'sha256', 'hex');
      if (
        timestamp === undefined ||
        !partsMatch('sha256', keys, [timestampText, token], signature ? [signature] : [])
      ) {
        throw noMatch(name, 'signature.signature');
      }
      checkTimestamp(name, timestamp, now, toleranceSeconds);

      const data = bodyObject(name, object, 'event-data');
      return {
        provider: name,
        eventId: bodyString(name, data, 'id'),
        type: bodyString(name, data, 'event'),
        payloadText: text,
        headers: {},
        body: object,
      };
    },
  };
}

/** The `signature` object Mailgun would put in the body, for tests and the dev CLI. */
export function signMailgun({
  secret,
  token,
  timestamp = unixSeconds(),
}: {
  secret: string;
  /** 50 random characters, fresh per request. */
  token: string;
  timestamp?: number;
}): { timestamp: string; token: string; signature: string } {
  const t = String(Math.floor(timestamp));
  return { timestamp: t, token, signature: hmacOf('sha256', hmacKey(secret), [t, token]).toString('hex') };
}

/** The catalogue's mailgun: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'mailgun',
  facts: MAILGUN_FACTS,
  create: mailgunProvider,
  subject: ['/event-data/recipient', '/event-data/message/headers/message-id'],
  caseless: { subject: ['/event-data/recipient'] },
};
