import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { assertSecrets, toBytes } from '../../shared.ts';
import { requireStrongKey } from '../../public-keys.ts';
import type { SignedRequest, VerifiedEvent } from '../../types.ts';
import { batchProvider, jsonArrayItems, type BatchProvider } from '../batch.ts';
import type { ProviderFacts } from '../facts.ts';
import {
  bodyString,
  sourceName,
  timestampThenBody,
  type KeyPairSignOptions,
  tolerance,
  type CatalogueProviderOptions,
  checkKeyPairSignature,
} from '../signing.ts';
import type { CatalogueDefinition } from '../definition.ts';

export const SENDGRID_FACTS: ProviderFacts = {
  scheme:
    'X-Twilio-Email-Event-Webhook-Signature: <base64 DER ECDSA P-256/SHA-256 signature of ' +
    'X-Twilio-Email-Event-Webhook-Timestamp + raw body>, verified with the public key of Mail Settings > ' +
    'Signed Event Webhook (base64 SPKI); no shared secret',
  eventKey: 'per event of the batch: its sg_event_id; refused as invalid_payload when absent',
  eventType: "each event's event field (processed, delivered, open, click, bounce, dropped, ...)",
  toleranceSeconds: 300,
  retries: 'retried for up to 24 hours when the endpoint does not answer 2xx; events are batched per request',
  quirks:
    'a JSON array of events per request, each recorded as its own event; the signed timestamp has no ' +
    'documented tolerance',
  requiredOptions: [],
  docs: 'https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features',
};

/**
 * The KeyObject of the verification key SendGrid shows (base64 SPKI DER, with or without PEM armour): an ECDSA
 * P-256 key, else refused (public-keys.ts); `where` names it in the error.
 */
export function sendgridPublicKey(text: string, where = 'sendgrid: the verification key'): KeyObject {
  const base64 = text.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
  } catch {
    // OpenSSL's reason is not passed on: the key is public, but the message would not say which source it is.
    throw new TypeError(`${where} is not a base64 SPKI public key`);
  }
  return requireStrongKey(where, key, { type: 'ec', curve: 'prime256v1' });
}

/** Whether `signatureBase64` is an ECDSA (SHA-256, DER) signature of `timestamp` + `rawBody` under any key. */
export function verifySendgridSignature(
  keys: readonly KeyObject[],
  timestamp: string,
  rawBody: Uint8Array,
  signatureBase64: string,
): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signatureBase64)) return false;
  const message = timestampThenBody(timestamp, rawBody);
  const signature = Buffer.from(signatureBase64, 'base64');
  return keys.some((key) => {
    try {
      return verify('sha256', message, { key, dsaEncoding: 'der' }, signature);
    } catch {
      // OpenSSL refuses bytes that are no DER signature at all: that is a mismatch, not a server error.
      return false;
    }
  });
}

/**
 * The signature header value SendGrid would send, made with an EC P-256 private key (tests and the dev CLI, which
 * configure the matching public key as the source's secret).
 */
export function signSendgrid({ payload, privateKey, timestamp }: KeyPairSignOptions): string {
  const message = timestampThenBody(String(Math.floor(timestamp)), toBytes(payload));
  return sign('sha256', message, { key: privateKey, dsaEncoding: 'der' }).toString('base64');
}

/**
 * SendGrid's signed Event Webhook: `X-Twilio-Email-Event-Webhook-Signature` is the base64 DER ECDSA (P-256,
 * SHA-256) signature of `X-Twilio-Email-Event-Webhook-Timestamp` followed by the raw body; `secrets` are the
 * verification keys from the SendGrid settings. A request carries a JSON array of events: `receive` gives one per
 * item (`batchProvider`), keyed by `sg_event_id` and typed by `event`.
 */
export function sendgridProvider(options: CatalogueProviderOptions): BatchProvider {
  const name = sourceName('sendgrid', options.name);
  assertSecrets(name, options.secrets);
  const keys = options.secrets.map((secret, index) =>
    sendgridPublicKey(secret, `${name}: secret #${index + 1}`),
  );
  const toleranceSeconds = tolerance(name, options.toleranceSeconds, SENDGRID_FACTS.toleranceSeconds ?? 300);

  function verifyBatch(request: SignedRequest, now: Date): VerifiedEvent[] {
    checkKeyPairSignature(name, request, now, toleranceSeconds, {
      signatureHeader: 'x-twilio-email-event-webhook-signature',
      timestampHeader: 'x-twilio-email-event-webhook-timestamp',
      sender: 'SendGrid',
      verify: (timestamp, rawBody, signature) => verifySendgridSignature(keys, timestamp, rawBody, signature),
      mismatch:
        'the signature is not one by any configured verification key; is the key the one under ' +
        'Mail Settings > Signed Event Webhook, and the body the raw request body?',
    });
    return jsonArrayItems(name, request.rawBody).map(({ object, text }) => ({
      provider: name,
      eventId: bodyString(name, object, 'sg_event_id'),
      type: bodyString(name, object, 'event'),
      payloadText: text,
      headers: {},
      body: object,
    }));
  }

  return batchProvider(name, verifyBatch);
}

/** The catalogue's sendgrid: its facts and its factory. */
export const definition: CatalogueDefinition = {
  type: 'sendgrid',
  facts: SENDGRID_FACTS,
  create: sendgridProvider,
  subject: ['/email', '/sg_message_id'],
  caseless: { subject: ['/email'] },
};
